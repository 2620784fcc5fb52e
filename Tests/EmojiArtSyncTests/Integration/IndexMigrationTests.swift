@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

/// An index of an earlier schema version is migrated in place, not moved aside. Version 1 (before owner
/// identities): each row takes the identity of its fingerprint, and one whose fingerprint was forgotten has none
/// (whatever is at its path is then treated as someone else's: moved aside, never replaced). Version 2 (rows keyed
/// by name): every row moves, every column as it was, into the table in arrival order with its index of names.
/// Version 3 (no birth times): each row keeps its identity, its birth time unknown.
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
        #expect(index.upgradedFrom == 1)
        #expect(index.count == 2)
        #expect(try index.entry(named: "gallery_image_1.png")?.identity == FileIdentity(device: 2049, inode: 77))
        #expect(try index.entry(named: "gallery_image_1.png")?.tag == "t1")
        #expect(try index.entry(named: "gallery_image_2.png")?.identity == nil)
        #expect(!FileManager.default.fileExists(atPath: directory.indexPath + ".corrupt"))
        #expect(try Self.schema(of: directory) == Self.currentSchema)
    }

    @Test @SyncActor func aVersion2IndexIsMigratedKeepingEveryColumnOfEveryRow() throws {
        let dir = TemporaryDirectory("migrate-v2")
        let directory = SyncDirectory(dir.path)
        try directory.prepare()
        try SQLiteConnection(path: directory.indexPath).execute("""
            PRAGMA journal_mode=WAL;
            CREATE TABLE files(
                name TEXT PRIMARY KEY NOT NULL, key TEXT NOT NULL, size INTEGER NOT NULL, sha256 TEXT NOT NULL,
                tag TEXT, etag TEXT, last_modified TEXT, device INTEGER, inode INTEGER, mtime_ns INTEGER, ctime_ns INTEGER,
                owner_device INTEGER, owner_inode INTEGER
            ) WITHOUT ROWID;
            CREATE TABLE unusable_answers(
                key TEXT PRIMARY KEY NOT NULL, tag TEXT, reason TEXT NOT NULL, answered_at INTEGER NOT NULL
            ) WITHOUT ROWID;
            INSERT INTO files VALUES ('gallery_image_2.png', '/gallery/image/2.png', 20, 'bb', 't2', '"e2"',
                'Sat, 28 Nov 2026 07:00:00 GMT', 2049, 78, 11, 12, 2049, 70);
            INSERT INTO files VALUES ('gallery_image_1.png', '/gallery/image/1.png', 10, 'aa', NULL, NULL, NULL,
                NULL, NULL, NULL, NULL, NULL, NULL);
            INSERT INTO unusable_answers VALUES ('/gallery/image/3.png', 't3', 'not a PNG', 1800000000);
            PRAGMA user_version=2;
            """)

        let (index, notice) = try AssetIndex.open(directory: directory)
        #expect(notice == nil, "migrated, not rebuilt: \(notice ?? "")")
        #expect(index.upgradedFrom == 2)
        #expect(index.count == 2)
        #expect(try index.entry(named: "gallery_image_2.png") == IndexEntry(
            name: "gallery_image_2.png", key: "/gallery/image/2.png", size: 20, sha256: "bb", tag: "t2", etag: "\"e2\"",
            lastModified: "Sat, 28 Nov 2026 07:00:00 GMT",
            fingerprint: FileFingerprint(device: 2049, inode: 78, size: 20, modifiedNanoseconds: 11, changedNanoseconds: 12),
            identity: FileIdentity(device: 2049, inode: 70)))
        #expect(try index.entry(named: "gallery_image_1.png") == IndexEntry(
            name: "gallery_image_1.png", key: "/gallery/image/1.png", size: 10, sha256: "aa"))
        #expect(try index.unusableAnswer(for: AssetKey(feedURL: "/gallery/image/3.png"))?.reason == "not a PNG")
        #expect(try Self.schema(of: directory) == Self.currentSchema)

        // Still one row per name: a second row for a name replaces the first.
        #expect(try index.put(IndexEntry(name: "gallery_image_1.png", key: "/gallery/image/1.png", size: 11, sha256: "cc")) == false)
        #expect(index.count == 2)
        #expect(try index.entry(named: "gallery_image_1.png")?.sha256 == "cc")
        #expect(!FileManager.default.fileExists(atPath: directory.indexPath + ".corrupt"))
    }

    @Test @SyncActor func aVersion3IndexIsMigratedWithItsIdentitiesBornAtAnUnknownTime() throws {
        let dir = TemporaryDirectory("migrate-v3")
        let directory = SyncDirectory(dir.path)
        try directory.prepare()
        try SQLiteConnection(path: directory.indexPath).execute("""
            PRAGMA journal_mode=WAL;
            CREATE TABLE files(
                name TEXT NOT NULL, key TEXT NOT NULL, size INTEGER NOT NULL, sha256 TEXT NOT NULL, tag TEXT, etag TEXT,
                last_modified TEXT, device INTEGER, inode INTEGER, mtime_ns INTEGER, ctime_ns INTEGER,
                owner_device INTEGER, owner_inode INTEGER
            );
            CREATE UNIQUE INDEX files_by_name ON files(name);
            CREATE TABLE unusable_answers(
                key TEXT PRIMARY KEY NOT NULL, tag TEXT, reason TEXT NOT NULL, answered_at INTEGER NOT NULL
            ) WITHOUT ROWID;
            INSERT INTO files VALUES ('gallery_image_2.png', '/gallery/image/2.png', 20, 'bb', 't2', NULL, NULL,
                2049, 78, 11, 12, 2049, 78);
            PRAGMA user_version=3;
            """)

        let (index, notice) = try AssetIndex.open(directory: directory)
        #expect(notice == nil, "migrated, not rebuilt: \(notice ?? "")")
        #expect(index.upgradedFrom == 3)
        let row = try #require(try index.entry(named: "gallery_image_2.png"))
        #expect(row.identity?.born == nil && row.identity == FileIdentity(device: 2049, inode: 78))
        #expect(row.fingerprint == FileFingerprint(device: 2049, inode: 78, size: 20, modifiedNanoseconds: 11, changedNanoseconds: 12))
        #expect(try Self.schema(of: directory) == Self.currentSchema)

        // A row written now keeps its file's birth time, and a file born at another time is another file.
        var rewritten = row
        rewritten.identity = FileIdentity(device: 2049, inode: 78, born: 1_800_000_000_123_456_789)
        try index.put(rewritten)
        let born = try index.entry(named: "gallery_image_2.png")?.identity
        #expect(born?.born == 1_800_000_000_123_456_789)
        #expect(born != FileIdentity(device: 2049, inode: 78, born: 1_800_000_000_123_456_790))
    }

    /// The run that migrates an index says so in its log, once (a person who downgrades then knows why the older
    /// agent rebuilds it).
    @Test func theRunThatUpgradesTheIndexLogsItOnce() async throws {
        let gallery = try await GalleryFixture(count: 5)
        let dir = TemporaryDirectory("migrate-logged")
        let directory = SyncDirectory(dir.path)
        try directory.prepare()
        try await Self.writeEmptyVersion2Index(at: directory.indexPath)

        let first = try await gallery.syncOnce(dir: dir.path)
        let second = try await gallery.syncOnce(dir: dir.path)
        await gallery.stop()
        #expect(first.isComplete && second.isComplete)
        let upgrades = logLines(dir.path).filter { $0.contains("event=index") }
        #expect(upgrades.count == 1, "\(upgrades)")
        #expect(upgrades.first?.contains("msg=\"index upgraded\"") == true, "\(upgrades)")
        #expect(upgrades.first?.contains("from_version=2 version=\(AssetIndex.schemaVersion)") == true, "\(upgrades)")
        #expect(try await Self.schema(of: directory) == Self.currentSchema)
    }

    @SyncActor static func writeEmptyVersion2Index(at path: String) throws {
        try SQLiteConnection(path: path).execute("""
            CREATE TABLE files(
                name TEXT PRIMARY KEY NOT NULL, key TEXT NOT NULL, size INTEGER NOT NULL, sha256 TEXT NOT NULL,
                tag TEXT, etag TEXT, last_modified TEXT, device INTEGER, inode INTEGER, mtime_ns INTEGER, ctime_ns INTEGER,
                owner_device INTEGER, owner_inode INTEGER
            ) WITHOUT ROWID;
            PRAGMA user_version=2;
            """)
    }

    /// An index of a version this agent does not know (a later agent's, then a downgrade) is not read as if it were
    /// one: it is moved aside for a person to look at, and a new one is made.
    @Test @SyncActor func anIndexOfALaterVersionIsMovedAsideAndRebuilt() throws {
        let dir = TemporaryDirectory("index-later")
        let directory = SyncDirectory(dir.path)
        try directory.prepare()
        try SQLiteConnection(path: directory.indexPath).execute("""
            CREATE TABLE files(name TEXT PRIMARY KEY NOT NULL, something_new BLOB);
            INSERT INTO files VALUES ('gallery_image_1.png', x'00');
            PRAGMA user_version=\(AssetIndex.schemaVersion + 1);
            """)

        let (index, notice) = try AssetIndex.open(directory: directory)
        #expect(notice?.contains("moved to \(directory.indexPath).corrupt and rebuilt") == true, "\(notice ?? "no notice")")
        #expect(index.count == 0)
        #expect(try Self.schema(of: directory) == Self.currentSchema)
        let aside = try SQLiteConnection(path: directory.indexPath + ".corrupt")
        #expect(try aside.integer("PRAGMA user_version") == AssetIndex.schemaVersion + 1)
        #expect(try aside.integer("SELECT count(*) FROM files") == 1)
    }

    /// A new index is made in the current schema with pages of 2 KiB, and still hands its rows over by name.
    @Test @SyncActor func aNewIndexIsOfTheCurrentSchemaAndStillWalksItsRowsByName() throws {
        let dir = TemporaryDirectory("index-new")
        let directory = SyncDirectory(dir.path)
        try directory.prepare()
        let (index, notice) = try AssetIndex.open(directory: directory)
        #expect(notice == nil)
        #expect(index.upgradedFrom == nil)
        try index.transaction { () throws(SyncError) in
            for n in [7, 3, 90, 12, 1] {
                try index.put(IndexEntry(name: "gallery_image_\(n).png", key: "/gallery/image/\(n).png", size: n, sha256: "s\(n)"))
            }
        }
        #expect(try index.allEntries().map(\.name) == [1, 12, 3, 7, 90].map { "gallery_image_\($0).png" })
        #expect(try index.names(after: "gallery_image_3.png", limit: 10).map(\.name) == ["gallery_image_7.png", "gallery_image_90.png"])
        #expect(try Self.schema(of: directory) == Self.currentSchema)
        #expect(try SQLiteConnection(path: directory.indexPath).integer("PRAGMA page_size") == 2048)
    }

    /// The version, and what `sqlite_master` says of the table of rows, read through a connection of its own.
    @SyncActor static func schema(of directory: SyncDirectory) throws -> String {
        let connection = try SQLiteConnection(path: directory.indexPath)
        let version = try connection.integer("PRAGMA user_version")
        let isKeyedByName = try connection.integer("SELECT count(*) FROM sqlite_master WHERE name = 'files' AND sql LIKE '%WITHOUT ROWID%'")
        let hasIndexOfNames = try connection.integer(
            "SELECT count(*) FROM pragma_index_list('files') WHERE name = 'files_by_name' AND \"unique\" = 1")
        let hasBirthTimes = try connection.integer("SELECT count(*) FROM pragma_table_info('files') WHERE name = 'owner_born_ns'")
        return "version \(version), keyed by name: \(isKeyedByName == 1), unique index of names: \(hasIndexOfNames == 1), "
            + "birth times: \(hasBirthTimes == 1)"
    }

    static let currentSchema = "version 4, keyed by name: false, unique index of names: true, birth times: true"
}
