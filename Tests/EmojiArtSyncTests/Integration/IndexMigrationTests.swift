@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

/// An index of schema version 1 (before owner identities) is migrated in place, not moved aside: each row takes
/// the identity of its fingerprint, and one whose fingerprint was forgotten has none (whatever is at its path
/// is then treated as someone else's: moved aside, never replaced).
@Suite(.timeLimit(.minutes(1)))
struct IndexMigrationTests {
    @Test @SyncActor func aVersion1IndexIsMigratedKeepingEveryRowAndItsIdentity() throws {
        let dir = TemporaryDirectory("migrate-v1")
        let directory = SyncDirectory(dir.path)
        try directory.prepare()
        try SQLiteConnection(path: directory.indexPath).execute("""
            CREATE TABLE files(
                name TEXT PRIMARY KEY NOT NULL, key TEXT NOT NULL, size INTEGER NOT NULL, sha256 TEXT NOT NULL,
                tag TEXT, etag TEXT, last_modified TEXT, device INTEGER, inode INTEGER, mtime_ns INTEGER, ctime_ns INTEGER
            ) WITHOUT ROWID;
            CREATE TABLE unusable_answers(
                key TEXT PRIMARY KEY NOT NULL, tag TEXT, reason TEXT NOT NULL, answered_at INTEGER NOT NULL
            ) WITHOUT ROWID;
            INSERT INTO files VALUES ('gallery_image_1.png', '/gallery/image?1', 10, 'aa', 't1', NULL, NULL, 2049, 77, 5, 6);
            INSERT INTO files VALUES ('gallery_image_2.png', '/gallery/image?2', 20, 'bb', 't2', NULL, NULL, NULL, NULL, NULL, NULL);
            PRAGMA user_version=1;
            """)  // the connection closes here, as an old agent's did

        let (index, notice) = try AssetIndex.open(directory: directory)
        #expect(notice == nil, "migrated, not rebuilt: \(notice ?? "")")
        #expect(index.count == 2)
        #expect(try index.entry(named: "gallery_image_1.png")?.identity == FileIdentity(device: 2049, inode: 77))
        #expect(try index.entry(named: "gallery_image_1.png")?.tag == "t1")
        #expect(try index.entry(named: "gallery_image_2.png")?.identity == nil)
        #expect(!FileManager.default.fileExists(atPath: directory.indexPath + ".corrupt"))
    }
}
