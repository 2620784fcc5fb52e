@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

/// A body goes to its temporary file through the write buffer; one that never outgrew the buffer is handed on
/// whole as well, so the miss checks it from memory instead of opening and reading the file again. Either way the
/// file holds exactly the bytes, and the digest is theirs.
@Suite struct StreamedBodyFileTests {
    private func stream(
        _ bytes: [UInt8], pieces: Int, into directory: String
    ) throws -> (finished: StreamedBodyFile.Finished, stored: StagedFile) {
        let file = StreamedBodyFile(in: TemporaryFolder(path: directory))
        let size = max(1, bytes.count / pieces)
        for start in stride(from: 0, to: bytes.count, by: size) {
            let ok = bytes[start..<min(start + size, bytes.count)].withUnsafeBytes { file.write($0) }
            #expect(ok)
        }
        return (try file.finish(), try file.storeUnnamed(flushing: false) ?? file.storeNamed())
    }

    /// A small body is finished without a file (the miss checks it from memory first), then stored in one write, into
    /// a file with no name: nothing appears in the temporary folder.
    @Test func aBodyThatFitsTheBufferIsHandedOnWholeAndWrittenWithNoName() throws {
        let dir = TemporaryDirectory("streamed-small")
        let bytes = (0..<1000).map { UInt8($0 % 251) }
        let file = StreamedBodyFile(in: TemporaryFolder(path: dir.path))
        for start in stride(from: 0, to: bytes.count, by: 143) {
            #expect(bytes[start..<min(start + 143, bytes.count)].withUnsafeBytes { file.write($0) })
        }
        let finished = try file.finish()
        #expect(finished.bytes == bytes)
        #expect(finished.path == nil)
        #expect(finished.sha256 == SHA256Digest.hex(of: bytes))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == [])
        let stored = try #require(try file.storeUnnamed(flushing: false))
        #expect(stored.isUnnamed)
        #expect(readBytes(stored.readablePath) == bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == [])
    }

    @Test func aLargerBodyIsCheckedFromItsFileNotHeldWhole() throws {
        let dir = TemporaryDirectory("streamed-large")
        let bytes = (0..<(StreamedBodyFile.bufferSize + 4097)).map { UInt8($0 % 253) }
        let (finished, stored) = try stream(bytes, pieces: 9, into: dir.path)
        #expect(finished.bytes == nil)
        #expect(finished.path == stored.path)
        #expect(!stored.isUnnamed)
        #expect(readBytes(stored.readablePath) == bytes)
        #expect(finished.sha256 == SHA256Digest.hex(of: bytes))
    }

    /// A feed body read and kept for the next poll is the file the sink wrote, even when another file took its name
    /// in the temporary folder meanwhile: that one is neither read nor written (before, the body was opened by its
    /// path for the decode, and for the layout `KeptFeedBody` writes after it).
    @Test func aFinishedFileReopenedIsTheOneWrittenNotWhatTookItsName() throws {
        let dir = TemporaryDirectory("streamed-reopen")
        let bytes = (0..<(StreamedBodyFile.bufferSize + 100)).map { UInt8($0 % 241) }
        let file = StreamedBodyFile(in: TemporaryFolder(path: dir.path))
        #expect(bytes.withUnsafeBytes { file.write($0) })
        let finished = try file.finish()
        let path = try #require(finished.path)
        // Someone's file of the same size takes the name.
        let theirs = [UInt8](repeating: 0x41, count: bytes.count)
        try writeBytes(theirs, to: dir.file("theirs"))
        #expect(rename(dir.file("theirs"), path) == 0)

        #expect(try MappedFeedBody(path: path).withBytes { Array($0) } == theirs, "by its path, the body would be theirs")
        let descriptor = try file.reopenFinishedFile()
        defer { close(descriptor) }
        let mapped = try MappedFeedBody(descriptor: descriptor, count: finished.size, path: path)
        #expect(try mapped.withBytes { Array($0) } == bytes, "the bytes read are the ones written")
        var layout = FeedLayout()
        layout.itemStarts = [1, 2, 3]
        _ = try KeptFeedBody.keep(descriptor: descriptor, path: path, bodySize: bytes.count, layout: layout)
        #expect(readBytes(path) == theirs, "the file that took the name is left as it was")
    }

    /// The committer records the identity the writer took from its descriptor instead of looking the temporary path
    /// up again: it must be the file's at the path.
    @Test func theIdentityHandedOnIsTheWrittenFiles() throws {
        let dir = TemporaryDirectory("streamed-identity")
        let small = try stream(Array(repeating: 7, count: 100), pieces: 1, into: dir.path).stored
        let large = try stream(Array(repeating: 9, count: StreamedBodyFile.bufferSize + 1), pieces: 3, into: dir.path).stored
        for stored in [small, large] {
            var info = stat()  // following `/proc/self/fd/N` to the unnamed file
            #expect(stat(stored.readablePath, &info) == 0)
            #expect(FileIdentity(info, born: nil) == stored.identity)
        }
        #expect(small.identity != large.identity)
    }

    /// A small body found to be no PNG never makes a file; a large one, never stored, goes with its sink, file and all.
    @Test func aFinishedBodyNotStoredLeavesNoFile() throws {
        let dir = TemporaryDirectory("streamed-dropped")
        do {
            let file = StreamedBodyFile(in: TemporaryFolder(path: dir.path))
            #expect(Array("{\"error\": 1}".utf8).withUnsafeBytes { file.write($0) })
            #expect(try file.finish().path == nil)
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == [])
        }
        var path: String?
        do {
            let file = StreamedBodyFile(in: TemporaryFolder(path: dir.path))
            let large = [UInt8](repeating: 1, count: StreamedBodyFile.bufferSize + 1)
            #expect(large.withUnsafeBytes { file.write($0) })
            path = try file.finish().path
            #expect(path.map { FileManager.default.fileExists(atPath: $0) } == true)
        }
        #expect(path.map { FileManager.default.fileExists(atPath: $0) } == false)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == [])
    }

    /// A repair's sink while DIR is being emptied (`mayMakeFile` says no): a body that fits the buffer makes no file
    /// until it is finished; one that outgrows the buffer fails instead of making its file, and leaves nothing.
    @Test func aSinkThatMayNotMakeItsFileHoldsASmallBodyAndRefusesALargeOne() throws {
        let dir = TemporaryDirectory("streamed-held")
        let small = StreamedBodyFile(in: TemporaryFolder(path: dir.path), mayMakeFile: { false })
        #expect(Array(repeating: UInt8(3), count: 1000).withUnsafeBytes { small.write($0) })
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == [])
        #expect(try small.finish().bytes == Array(repeating: UInt8(3), count: 1000))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == [])
        let stored = try #require(try small.storeUnnamed(flushing: false))
        #expect(readBytes(stored.readablePath) == Array(repeating: UInt8(3), count: 1000))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == [], "no name made")

        let spill = TemporaryDirectory("streamed-held-spill")
        let large = StreamedBodyFile(in: TemporaryFolder(path: spill.path), mayMakeFile: { false })
        let chunk = [UInt8](repeating: 5, count: 64 * 1024)
        var accepted = 0
        while accepted <= StreamedBodyFile.bufferSize, chunk.withUnsafeBytes({ large.write($0) }) { accepted += chunk.count }
        #expect(accepted == StreamedBodyFile.bufferSize, "took \(accepted) bytes before refusing")
        #expect(large.couldNotStore)
        #expect(large.failureDescription.contains("being emptied"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: spill.path) == [])
        #expect(throws: SyncError.self) { try large.finish() }
        #expect(throws: SyncError.self) { try large.storeNamed() }
        #expect(try FileManager.default.contentsOfDirectory(atPath: spill.path) == [])
    }

    /// A repair's body held whole while the rename gate is shut: written and flushed into a file with no name, handed
    /// on once the gate opens, still with no name (the committer links it into DIR); its identity is the file's.
    @Test func aHeldBodyIsWrittenWithNoNameUntilTheGateOpens() async throws {
        let dir = TemporaryDirectory("streamed-unnamed")
        let bytes = (0..<5000).map { UInt8($0 % 241) }
        let file = StreamedBodyFile(in: TemporaryFolder(path: dir.path))
        #expect(bytes.withUnsafeBytes { file.write($0) })
        _ = try file.finish()
        let gate = RenameGate()
        gate.holdShut(true)
        let stored = Task { try await file.storeFlushed(once: gate) }
        #expect(await eventually(timeout: .seconds(30)) { gate.waiters == 1 })
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == [])
        gate.holdShut(false)
        let unnamed = try #require(try await stored.value)
        #expect(unnamed.isUnnamed)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == [])
        #expect(readBytes(unnamed.readablePath) == bytes)
        #expect(try unnamed.placeIfAbsent(in: AT_FDCWD, as: dir.file("a.png"), shownAs: dir.file("a.png")) != nil)
        #expect(readBytes(dir.file("a.png")) == bytes)
        #expect(try FileStatus.at(dir.file("a.png"))?.identity == unnamed.identity)
    }

    /// DIR went while the body waited: the file is never named, and nothing is left in the folder.
    @Test func aHeldBodyIsDroppedWhenDIRGoesWhileItWaits() async throws {
        let dir = TemporaryDirectory("streamed-unnamed-gone")
        let file = StreamedBodyFile(in: TemporaryFolder(path: dir.path))
        #expect([UInt8](repeating: 3, count: 300).withUnsafeBytes { file.write($0) })
        _ = try file.finish()
        let gate = RenameGate()
        gate.holdShut(true)
        let stored = Task { try await file.storeFlushed(once: gate) }
        #expect(await eventually(timeout: .seconds(30)) { gate.waiters == 1 })
        gate.shutForGood("DIR was deleted")
        await #expect(throws: SyncError.self) { try await stored.value }
        file.discard()
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == [])
    }
}
