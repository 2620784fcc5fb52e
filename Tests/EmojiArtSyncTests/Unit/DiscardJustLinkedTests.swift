@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `OwnershipGuard.discardJustLinked`, the one removal that cannot take the file into `taken/` first (the committer's
/// take-back when `rm -rf DIR` has already deleted the state directory): it takes the file to a hidden name in DIR,
/// unlinks it only if it is the file the agent linked, and puts anything else back at its name.
@Suite struct DiscardJustLinkedTests {
    @Test func onlyTheFileTheAgentLinkedIsUnlinked() throws {
        let dir = TemporaryDirectory("discard")
        let directory = SyncDirectory(dir.path)
        let descriptor = open(dir.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { close(descriptor) }
        let ownership = OwnershipGuard(
            directory: directory, directoryDescriptor: descriptor, status: PathStatus(hooks: nil), gate: nil, hooks: nil)
        let name = "gallery_image_1.png"
        #expect(FileManager.default.createFile(atPath: dir.file(name), contents: Data("agent".utf8)))
        let linked = try #require(try FileStatus.at(dir.file(name))).identity

        // A person's file took the path meanwhile (made beside it, then renamed over it: never the old inode's
        // number): left whole.
        #expect(FileManager.default.createFile(atPath: dir.file("mine.png"), contents: Data("mine".utf8)))
        #expect(rename(dir.file("mine.png"), dir.file(name)) == 0)
        #expect(!ownership.discardJustLinked(name, identity: linked))
        #expect(FileManager.default.contents(atPath: dir.file(name)) == Data("mine".utf8))
        #expect(dir.names() == [name], "taken to a hidden name, looked at and put back: \(dir.names())")

        // The agent's file: unlinked.
        let own = try #require(try FileStatus.at(dir.file(name))).identity
        #expect(ownership.discardJustLinked(name, identity: own))
        #expect(!FileManager.default.fileExists(atPath: dir.file(name)))
        // Nothing there any more: nothing to do.
        #expect(!ownership.discardJustLinked(name, identity: own))
    }
}
