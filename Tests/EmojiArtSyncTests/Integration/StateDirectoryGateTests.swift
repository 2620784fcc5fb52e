import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the agent writes into its state directory through a new name waits for the rename gate, as a repair does: a
/// name made there while `rm -rf DIR` is inside it makes `rm` fail with "Directory not empty".
@Suite(.timeLimit(.minutes(3)))
struct StateDirectoryGateTests {
    /// Before, the status was written whenever something changed: the deletions of `rm -rf DIR` ring for one, and
    /// its temporary name failed `rm` (a fresh-clone CI run failed `VanishingDirectoryTests` so); an agent that
    /// stopped because DIR was gone still wrote its last status there.
    @Test func theStatusWaitsForTheGateAndIsNeverWrittenOnceDIRIsGone() async throws {
        let gallery = try await GalleryFixture(count: 10, imageSize: .small)
        let dir = TemporaryDirectory("status-gate")
        let hooks = AgentTestHooks()
        let agent = try await gallery.startAgent(dir: dir) { $0.testHooks = hooks }
        let gate = try #require(hooks.renameGate)
        let statusPath = dir.file(".emojiart-sync/status.json")
        let written = await eventually {
            logLines(dir.path).contains { $0.contains("event=poll") }
                && (try? AgentStatus.read(from: statusPath))?.assets.ok == gallery.validNumbers.count
        }
        try #require(written)
        let changes = agent.background.agent.core.log.changes

        // Shut, as `rm`'s deletions shut it: the change waits at the gate, the file is not touched.
        gate.holdShut(true)
        let before = try Self.inode(statusPath)
        changes.ring()
        #expect(await eventually { gate.waiters >= 1 }, "the status writer waits for the gate")
        #expect(try Self.inode(statusPath) == before)
        #expect(Self.stateEntries(dir).filter { $0.hasPrefix("status.json.") } == [])
        gate.holdShut(false)
        #expect(await eventually { (try? Self.inode(statusPath)) != before }, "written once the gate opened")

        // Gone for good: no status is written again, not even the last one as the agent stops.
        gate.shutForGood("DIR is gone (test)")
        unlink(statusPath)
        changes.ring()
        #expect(await eventually {
            logLines(dir.path).contains { $0.contains("event=status") && $0.contains("result=stopped") }
        })
        #expect(await agent.stop() == .success)
        #expect(access(statusPath, F_OK) != 0, "no status written into a DIR that is gone")
        #expect(Self.stateEntries(dir).filter { $0.hasPrefix("status.json") } == [])
        await gallery.stop()
    }

    /// The marker a checkpoint records (which spares the next start its `quick_check`) is left out while the gate is
    /// shut; the checkpoint itself is made. Before, the end of every pass wrote it whatever DIR was going through.
    @Test func theCheckpointsMarkerIsLeftOutWhileTheGateIsShut() async throws {
        let gallery = try await GalleryFixture(count: 5, imageSize: .small)
        let dir = TemporaryDirectory("marker-gate")
        let hooks = AgentTestHooks()
        let agent = try await gallery.startAgent(dir: dir) { $0.testHooks = hooks }
        let gate = try #require(hooks.renameGate)
        let marker = dir.file(".emojiart-sync/index.checkpoint")
        let owned = agent.background.agent.core.owned
        // The first pass makes the index durable after its `event=poll` line: wait for its marker, or that
        // checkpoint (its gate looked at before the test shuts it) may make the marker after the test's unlink.
        let passDurable = await eventually {
            logLines(dir.path).contains { $0.contains("event=poll") } && access(marker, F_OK) == 0
        }
        try #require(passDurable)

        gate.holdShut(true)
        unlink(marker)
        try await owned.makeDurable()
        #expect(access(marker, F_OK) != 0, "no marker made while the gate was shut")
        #expect(Self.stateEntries(dir).filter { $0.hasPrefix("index.checkpoint") } == [])
        gate.holdShut(false)
        try await owned.makeDurable()
        #expect(access(marker, F_OK) == 0, "the marker is made once the gate is open")
        #expect(await agent.stop() == .success)
        await gallery.stop()
    }

    /// The lock and the index deleted while the state directory stays (an `rm -rf DIR` that failed inside it, a
    /// person emptying it): the agent stops with exit status 1 naming them at its next look at the gate, here the
    /// repair of a deleted file, and puts nothing back. Before, it ran on without its lock and index, refusing each
    /// repair at the gate and logging another `event=repair` line for the same files, forever.
    @Test func theAgentStopsWhenItsLockAndIndexAreDeleted() async throws {
        let gallery = try await GalleryFixture(count: 10, imageSize: .small)
        let dir = TemporaryDirectory("state-files")
        let agent = try await gallery.startAgent(dir: dir)
        let ended = Mutex<EmojiArtSync.ExitStatus?>(nil)
        let watcher = Task {
            let status = await agent.task.value
            ended.withLock { $0 = status }
        }
        #expect(await eventually { logLines(dir.path).contains { $0.contains("event=poll") } })
        let directory = agent.background.agent.configuration.directory
        #expect(unlink(directory.lockPath) == 0 && unlink(directory.indexPath) == 0)
        let asset = dir.file("gallery_image_\(gallery.validNumbers[0]).png")
        #expect(unlink(asset) == 0)
        let stopped = await eventually(timeout: .seconds(20)) { ended.withLock { $0 } != nil }
        if !stopped { _ = await agent.stop() }
        _ = await watcher.result
        #expect(ended.withLock { $0 } == .fatal, "exit status 1")
        let message = agent.background.failure?.message ?? ""
        #expect(message.contains(directory.lockPath) || message.contains(directory.indexPath), "\(message)")
        #expect(message.contains("state directory of \(dir.path)"), "\(message)")
        #expect(access(asset, F_OK) != 0, "the deleted file was not put back")
        await gallery.stop()
    }

    private static func inode(_ path: String) throws -> UInt {
        var info = stat()
        guard stat(path, &info) == 0 else { throw TestFailure("cannot stat \(path): errno \(errno)") }
        return UInt(info.st_ino)
    }

    private static func stateEntries(_ dir: TemporaryDirectory) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: dir.file(".emojiart-sync"))) ?? ["(unreadable)"]
    }
}
