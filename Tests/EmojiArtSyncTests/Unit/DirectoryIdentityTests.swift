@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

/// What the agent says when DIR is gone and only `stat` saw it (inotify's event not read yet): a path that is not
/// there any more may have been removed or moved away, and the message must not claim one of them.
@Suite struct DirectoryIdentityTests {
    @Test func aDirectoryMovedAwayIsNotReportedAsRemoved() throws {
        let parent = TemporaryDirectory("identity")
        let directory = SyncDirectory(parent.file("emoji"))
        try FileManager.default.createDirectory(atPath: directory.stateDirectory, withIntermediateDirectories: true)
        let identity = try #require(DirectoryIdentity(of: directory))
        #expect(identity.change(in: directory) == nil)
        #expect(rename(directory.root, parent.file("emoji.old")) == 0)
        let message = try #require(identity.change(in: directory))
        #expect(message.contains(directory.root) && message.contains("moved away"), "\(message)")
    }
}
