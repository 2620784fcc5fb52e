@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

/// A body held whole goes to a file with no name (`O_TMPFILE`), which is linked straight into DIR: never over what is
/// at the path, never leaving a name in the temporary folder, and each holding a descriptor from a ration that, once
/// used up, sends bodies to named files as before.
@Suite struct StagedFileTests {
    /// A finished small body in `folder`, stored with `budget`.
    private func stored(_ bytes: [UInt8], in folder: String, budget: UnnamedFileBudget) throws -> StagedFile {
        let file = StreamedBodyFile(in: TemporaryFolder(path: folder), unnamedFiles: budget)
        #expect(bytes.withUnsafeBytes { file.write($0) })
        _ = try file.finish()
        return try file.storeUnnamed(flushing: false) ?? file.storeNamed()
    }

    @Test func anUnnamedFileIsLinkedIntoAnEmptyPathAndNeverOverWhatIsThere() throws {
        let tmp = TemporaryDirectory("staged-tmp")
        let dir = TemporaryDirectory("staged-dir")
        let budget = UnnamedFileBudget(limit: 4)
        let ours = [UInt8](repeating: 7, count: 300)
        let first = try stored(ours, in: tmp.path, budget: budget)
        #expect(first.isUnnamed && budget.inUse == 1)
        let placement = try #require(try first.placeIfAbsent(in: AT_FDCWD, as: dir.file("a.png"), shownAs: dir.file("a.png")))
        #expect(placement.fingerprint == (try FileStatus.at(dir.file("a.png"))?.fingerprint), "read from the descriptor after the link")
        #expect(readBytes(dir.file("a.png")) == ours)
        #expect(try FileStatus.at(dir.file("a.png"))?.identity == first.identity)
        #expect(budget.inUse == 0, "placed: its descriptor is closed")

        // A person's file at the path: the link is refused, their bytes stay, and the staged file is gone.
        let mine = Array("a person's file".utf8)
        #expect(FileManager.default.createFile(atPath: dir.file("b.png"), contents: Data(mine)))
        let second = try stored(ours, in: tmp.path, budget: budget)
        #expect(try second.placeIfAbsent(in: AT_FDCWD, as: dir.file("b.png"), shownAs: dir.file("b.png")) == nil)
        #expect(readBytes(dir.file("b.png")) == mine)
        #expect(budget.inUse == 0)
        #expect(tmp.names().isEmpty, "no name was ever made in the temporary folder")
        #expect(Set(dir.names()) == ["a.png", "b.png"])
    }

    @Test func pastItsRationABodyGoesToANamedFileAndARationIsGivenBackWhenItsFileGoes() throws {
        let tmp = TemporaryDirectory("staged-ration")
        let budget = UnnamedFileBudget(limit: 1)
        let bytes = [UInt8](repeating: 9, count: 200)
        let first = try stored(bytes, in: tmp.path, budget: budget)
        let second = try stored(bytes, in: tmp.path, budget: budget)
        #expect(first.isUnnamed)
        #expect(!second.isUnnamed, "the ration is used up: a named file")
        #expect(tmp.names().count == 1 && second.path.map { readBytes($0) } == bytes)
        second.discard()
        #expect(tmp.names().isEmpty, "a discarded named file is removed")
        first.discard()
        #expect(budget.inUse == 0)
        do {
            let third = try stored(bytes, in: tmp.path, budget: budget)
            #expect(third.isUnnamed, "the ration came back with the first file")
            #expect(budget.inUse == 1)
        }
        #expect(budget.inUse == 0, "an unnamed file dropped unplaced is closed, and gone")
        #expect(tmp.names().isEmpty)
    }

    /// The `OwnershipGuard` names a staged file in `taken/` before it swaps it in: an unnamed one is linked there.
    @Test func anUnnamedFileMovedIsLinkedAtThePathGiven() throws {
        let tmp = TemporaryDirectory("staged-move")
        let budget = UnnamedFileBudget(limit: 2)
        let bytes = [UInt8](repeating: 4, count: 100)
        let file = try stored(bytes, in: tmp.path, budget: budget)
        try file.move(to: tmp.file("held"))
        #expect(readBytes(tmp.file("held")) == bytes)
        #expect(try FileStatus.at(tmp.file("held"))?.identity == file.identity)
        #expect(budget.inUse == 0)
        let again = try stored(bytes, in: tmp.path, budget: budget)
        #expect(throws: SyncError.self) { try again.move(to: tmp.file("no-such-folder/held")) }
        #expect(budget.inUse == 0, "a failed move discards the file")
    }
}
