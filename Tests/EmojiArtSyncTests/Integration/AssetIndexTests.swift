import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The SQLite index: crash windows, corruption, upgrade from the JSON manifest, and warm starts that trust
/// fingerprints instead of reading files. Real files, the real gallery over HTTP.
@Suite(.timeLimit(.minutes(3)))
struct AssetIndexTests {
    @Test func aFileRenamedInPlaceWhoseRowWasNeverCommittedIsAdoptedOnRestart() async throws {
        let gallery = try await GalleryFixture(count: 5)
        let dir = TemporaryDirectory("crash-window")
        _ = try await gallery.syncOnce(dir: dir.path)
        let inodeBefore = try inode(dir.file("gallery_image_2.png"))
        // What a crash between the rename and the row's commit leaves: the file in place, no row for it.
        try await forgetRow(named: "gallery_image_2.png", in: dir.path)

        let report = try await gallery.syncOnce(dir: dir.path)
        await gallery.stop()
        #expect(report.isComplete)
        #expect(try inode(dir.file("gallery_image_2.png")) == inodeBefore, "adoption must not rewrite the file")
        #expect(readBytes(dir.file("gallery_image_2.png")) == gallery.server.imageBytes(2))
        #expect(logLines(dir.path).contains { $0.contains("event=adopt") && $0.contains("key=/gallery/image?2") })
        #expect(try await rowKeys(in: dir.path).contains("/gallery/image?2"))
    }

    @Test func aCorruptIndexIsMovedAsideAndRebuiltWithoutTouchingUserFiles() async throws {
        let gallery = try await GalleryFixture(count: 5)
        let dir = TemporaryDirectory("corrupt-index")
        _ = try await gallery.syncOnce(dir: dir.path)
        let mine: [UInt8] = Array("the user's own file\n".utf8)
        try writeBytes(mine, to: dir.file("notes.txt"))
        let index = dir.file(".emojiart-sync/index.sqlite3")
        try writeBytes(Array(repeating: 0x5A, count: 8192), to: index)
        unlink(index + "-wal")
        unlink(index + "-shm")

        let report = try await gallery.syncOnce(dir: dir.path)
        await gallery.stop()
        #expect(report.isComplete)
        #expect(FileManager.default.fileExists(atPath: index + ".corrupt"), "the broken index is kept for a person to look at")
        #expect(readBytes(dir.file("notes.txt")) == mine)
        for n in gallery.validNumbers {
            #expect(readBytes(dir.file("gallery_image_\(n).png")) == gallery.server.imageBytes(n))
        }
        #expect(logLines(dir.path).contains { $0.contains("event=index") })
        #expect(try await rowKeys(in: dir.path).count == gallery.validNumbers.count, "every file adopted again")
    }

    /// A run that ends with a checkpoint records the index file's state; the next start takes the record (so a
    /// crash leaves none) and trusts the file only if it is exactly that: any change since (even of the file's
    /// times alone) makes it check the whole file again.
    @Test func theIndexIsCheckedAgainUnlessItIsAsTheLastCheckpointLeftIt() async throws {
        let gallery = try await GalleryFixture(count: 5)
        let dir = TemporaryDirectory("index-checkpoint")
        let marker = dir.file(".emojiart-sync/index.checkpoint")
        _ = try await gallery.syncOnce(dir: dir.path)
        #expect(FileManager.default.fileExists(atPath: marker), "a finished run records its checkpoint")
        let directory = SyncDirectory(dir.path)
        let recorded = try #require(readBytes(marker))
        #expect(await AssetIndex.checkpointStillHolds(directory), "the index is as the checkpoint left it")
        #expect(!FileManager.default.fileExists(atPath: marker), "opening takes the record: a crash leaves none")

        try writeBytes(recorded, to: marker)
        let index = dir.file(".emojiart-sync/index.sqlite3")
        let later = time(nil) + 5
        var times = [timespec(tv_sec: later, tv_nsec: 0), timespec(tv_sec: later, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, index, &times, 0) == 0)  // a change of the file's times alone
        #expect(await !AssetIndex.checkpointStillHolds(directory), "a changed file is checked again")
        await gallery.stop()
    }

    /// Commits never checkpoint in the silo: once the write-ahead log passes SQLite's threshold, a checkpoint runs
    /// on the blocking-I/O pool through the checkpointer's own connection; making the index durable empties the log.
    /// The rows changed since a point are given while the index remembers them; once their reader says it has
    /// seen them they are dropped, and a question from before that point gets "walk the index" (nil), never a
    /// shorter list than what changed.
    @Test @SyncActor func rowChangesSeenAreForgottenAndAnOlderQuestionIsToldToWalk() throws {
        let dir = TemporaryDirectory("index-row-changes")
        let directory = SyncDirectory(dir.path)
        try directory.prepare()
        let (index, _) = try AssetIndex.open(directory: directory)
        let digest = String(repeating: "ab", count: 32)
        let start = index.rowChanges
        for n in 1...3 {
            _ = try index.transaction { () throws(SyncError) in
                try index.put(IndexEntry(name: "gallery_image_\(n).png", key: "/gallery/image?\(n)", size: 1000, sha256: digest))
            }
        }
        let seen = index.rowChanges
        #expect(index.rowsChanged(since: start)?.map(\.key) == ["/gallery/image?1", "/gallery/image?2", "/gallery/image?3"])
        index.forgetRowChanges(through: seen)
        #expect(index.rowsChanged(since: seen)?.isEmpty == true)
        #expect(index.rowsChanged(since: start) == nil, "changes forgotten were answered as fewer changes")
        try index.transaction { () throws(SyncError) in try index.remove(named: "gallery_image_2.png") }
        #expect(index.rowsChanged(since: seen)?.map(\.name) == ["gallery_image_2.png"])
    }

    @Test @SyncActor func theLogIsCheckpointedOffTheSiloAndEmptiedWhenMadeDurable() async throws {
        let dir = TemporaryDirectory("index-wal")
        let directory = SyncDirectory(dir.path)
        try directory.prepare()
        let (index, _) = try AssetIndex.open(directory: directory)
        let checkpointer = try #require(index.checkpointer)
        let digest = String(repeating: "ab", count: 32)
        // Every commit adds at least one page to the log: one more commit than the threshold passes it.
        let rows = IndexCheckpointer.walPagesBeforeCheckpoint + 1
        for n in 0..<rows {
            _ = try index.transaction { () throws(SyncError) in
                try index.put(IndexEntry(name: "gallery_image_\(n).png", key: "/gallery/image?\(n)", size: 1000, sha256: digest))
            }
        }
        let ran = await eventually { @Sendable in checkpointer.checkpoints > 0 }
        #expect(ran, "no checkpoint ran while the log grew")
        try await index.checkpoint()
        var info = stat()
        #expect(stat(directory.indexPath + "-wal", &info) != 0 || info.st_size == 0, "the log was not emptied")
        #expect(index.count == rows)
    }

    /// Whether the checkpoint's marker may be made is asked once the checkpoint is done, just before the name is
    /// made: asked before the checkpoint's I/O (as it was), a gate shut meanwhile by `rm -rf DIR` went unseen and
    /// the marker appeared in a state directory being removed (a fresh-clone CI run failed so).
    @Test @SyncActor func theMarkerIsAskedForOnlyOnceTheCheckpointIsDone() async throws {
        let dir = TemporaryDirectory("index-marker-asked")
        let directory = SyncDirectory(dir.path)
        try directory.prepare()
        let (index, _) = try AssetIndex.open(directory: directory)
        _ = try index.transaction { () throws(SyncError) in
            try index.put(IndexEntry(name: "gallery_image_1.png", key: "/gallery/image?1", size: 1000,
                                     sha256: String(repeating: "ab", count: 32)))
        }
        var info = stat()
        #expect(stat(directory.indexPath + "-wal", &info) == 0 && info.st_size > 0, "the commit is in the log")
        var logWhenAsked: Int?
        try await index.checkpoint(mayRecordState: {
            logWhenAsked = stat(directory.indexPath + "-wal", &info) == 0 ? Int(info.st_size) : 0
            return false
        })
        #expect(logWhenAsked == 0, "asked only once the log is checkpointed")
        #expect(access(directory.indexCheckpointPath, F_OK) != 0, "refused: no marker")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file(".emojiart-sync"))
            .filter { $0.hasPrefix("index.checkpoint") } == [])
        try await index.checkpoint(mayRecordState: { true })
        #expect(access(directory.indexCheckpointPath, F_OK) == 0, "allowed: the marker is made")
    }

    /// An answer that was no image waits to be written with the next transaction, and is read as recorded meanwhile
    /// (by `lookUp` too); one forgotten before it was written is gone; a checkpoint writes what still waits; a key
    /// on record when the index is opened is one the filter may hold, a key never recorded one it does not.
    @Test @SyncActor func unusableAnswersWaitForTheNextTransactionAndReadAsRecorded() async throws {
        let dir = TemporaryDirectory("index-unusable")
        let directory = SyncDirectory(dir.path)
        try directory.prepare()
        let (index, _) = try AssetIndex.open(directory: directory)
        let keys = try (1...3).map { try AssetKey(feedURL: "/gallery/image?\($0)") }
        let answer = UnusableAnswer(tag: "T", reason: "not a PNG", answeredAt: Date(timeIntervalSince1970: 1_000))
        let onDisk = { () throws -> Int64 in
            try SQLiteConnection(readingOnly: directory.indexPath).integer("SELECT count(*) FROM unusable_answers")
        }
        for key in keys { try index.recordUnusableAnswer(answer, for: key) }
        #expect(try onDisk() == 0, "waiting, not written")
        #expect(try index.unusableAnswer(for: keys[0]) == answer)
        #expect(try index.lookUp(keys[1]).unusable == answer)
        #expect(index.mayHaveUnusableAnswer(for: keys[2]))
        try index.forgetUnusableAnswer(for: keys[2])
        #expect(try index.unusableAnswer(for: keys[2]) == nil, "forgotten while waiting")
        try index.transaction {}
        #expect(try onDisk() == 2, "written with the next transaction")
        try index.recordUnusableAnswer(answer, for: keys[2])
        try await index.checkpoint()
        #expect(try onDisk() == 3, "written by the checkpoint")

        let (reopened, _) = try AssetIndex.open(directory: directory)
        for key in keys { #expect(reopened.mayHaveUnusableAnswer(for: key), "on record at open: \(key)") }
        #expect(!reopened.mayHaveUnusableAnswer(for: try AssetKey(feedURL: "/gallery/image?4")))
        #expect(try reopened.lookUp(keys[0]).unusable == answer)
        try reopened.forgetUnusableAnswers()
        #expect(!reopened.mayHaveUnusableAnswer(for: keys[0]), "none on record once all are forgotten")
    }

    @Test func anIndexThatIsOnlyBusyIsNeitherMovedAsideNorRebuilt() async throws {
        let gallery = try await GalleryFixture(count: 5)
        let dir = TemporaryDirectory("busy-index")
        _ = try await gallery.syncOnce(dir: dir.path)
        let index = dir.file(".emojiart-sync/index.sqlite3")

        // Someone holds the index's write lock (a person in `sqlite3` with a transaction open, say).
        let path = dir.path
        try await whileWriteLocked(index) {
            await #expect(throws: SyncError.self) { _ = try await gallery.syncOnce(dir: path) }
        }
        #expect(!FileManager.default.fileExists(atPath: index + ".corrupt"), "a busy index is not a corrupt one")
        #expect(!logLines(dir.path).contains { $0.contains("event=index") })

        // Once it is free, the files are still the agent's: nothing is adopted again or fetched.
        gallery.server.resetCounts()
        let report = try await gallery.syncOnce(dir: dir.path)
        await gallery.stop()
        #expect(report.isComplete)
        #expect(report.hits[.disk] == gallery.validNumbers.count)
        #expect(gallery.server.imageRequestCount == 0)
        #expect(!logLines(dir.path).contains { $0.contains("event=adopt") })
    }

    @Test func anOldManifestIsImportedOnceAndItsFilesStayTheAgents() async throws {
        let gallery = try await GalleryFixture(count: 5)
        let dir = TemporaryDirectory("import")
        try FileManager.default.createDirectory(atPath: dir.file(".emojiart-sync"), withIntermediateDirectories: true)
        var manifest = Manifest()
        for n in gallery.validNumbers {
            let bytes = gallery.server.imageBytes(n)
            try writeBytes(bytes, to: dir.file("gallery_image_\(n).png"))
            manifest.files["gallery_image_\(n).png"] = Manifest.Entry(
                key: "/gallery/image?\(n)", size: bytes.count, sha256: Asset.digest(bytes))
        }
        try JSONEncoder().encode(manifest).write(to: URL(fileURLWithPath: dir.file(".emojiart-sync/manifest.json")))

        let report = try await gallery.syncOnce(dir: dir.path)
        await gallery.stop()
        #expect(report.hits[.disk] == gallery.validNumbers.count, "imported rows make the files disk hits")
        #expect(gallery.server.imageRequestCount == gallery.errorNumbers.count)
        #expect(!FileManager.default.fileExists(atPath: dir.file(".emojiart-sync/manifest.json")))
        #expect(FileManager.default.fileExists(atPath: dir.file(".emojiart-sync/manifest.json.imported")))
        #expect(try await rowKeys(in: dir.path).count == gallery.validNumbers.count)
    }

    /// The count of rows the index keeps (status, the feed's sweeps) includes the rows an import wrote: it was
    /// the count before the import until the next start.
    @Test @SyncActor func anImportedManifestsRowsAreCounted() async throws {
        let dir = TemporaryDirectory("import-count")
        try FileManager.default.createDirectory(atPath: dir.file(".emojiart-sync"), withIntermediateDirectories: true)
        var manifest = Manifest()
        for n in 1...3 {
            manifest.files["gallery_image_\(n).png"] = Manifest.Entry(key: "/gallery/image?\(n)", size: 1, sha256: "00")
        }
        try JSONEncoder().encode(manifest).write(to: URL(fileURLWithPath: dir.file(".emojiart-sync/manifest.json")))
        let (index, notice) = try AssetIndex.open(directory: SyncDirectory(dir.path))
        #expect(notice?.contains("imported 3 files") == true)
        #expect(index.count == 3)
        #expect(try index.allEntries().count == 3)
    }

    @Test func aWarmStartReadsOnlyTheFileWhoseFingerprintChanged() async throws {
        let gallery = try await GalleryFixture(count: 12)
        let dir = TemporaryDirectory("warm-fingerprint")
        _ = try await gallery.syncOnce(dir: dir.path)
        // Rewrite one file in place with the same size and put its mtime back: only its ctime changes.
        let path = dir.file("gallery_image_4.png")
        var info = stat()
        lstat(path, &info)
        var bytes = try #require(readBytes(path))
        bytes[bytes.count / 2] ^= 0xFF
        let fd = open(path, O_WRONLY)
        _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        close(fd)
        var times = [info.st_atim, info.st_mtim]
        utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)

        gallery.server.resetCounts()
        let warm = try await gallery.syncOnce(dir: dir.path)
        await gallery.stop()
        #expect(warm.filesRead == 1, "only the file whose ctime moved is read")
        #expect(warm.repairs == 1)
        #expect(gallery.server.requestCount(path: "/gallery/image?4") == 1)
        #expect(readBytes(path) == gallery.server.imageBytes(4))
        #expect(warm.hits[.disk] == gallery.validNumbers.count - 1)
    }

    // MARK: - Helpers

    private func inode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int)
    }

    /// Runs `body` while a second connection holds the write lock of the index at `path`.
    @SyncActor
    private func whileWriteLocked(_ path: String, _ body: @Sendable () async throws -> Void) async throws {
        let connection = try SQLiteConnection(path: path)
        try connection.execute("BEGIN EXCLUSIVE")
        try await body()
        try connection.execute("ROLLBACK")
    }

    @SyncActor
    private func forgetRow(named name: String, in dir: String) throws {
        let (index, _) = try AssetIndex.open(directory: SyncDirectory(dir))
        try index.remove(named: name)
    }

    @SyncActor
    private func rowKeys(in dir: String) throws -> [String] {
        let (index, _) = try AssetIndex.open(directory: SyncDirectory(dir))
        return try index.allEntries().map(\.key)
    }
}
