import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The watcher's own checks take only what a person changed, never the rescan backlog that every `SIGHUP`
/// queues: a watcher that worked through rescans stopped reading inotify while `SIGHUP`s kept coming.
@Suite(.timeLimit(.minutes(2)))
struct WatcherChecksTests {
    @Test func theWatchersChecksRepairWhatAPersonChangedAndLeaveTheRescanToTheScheduler() async throws {
        let gallery = try await GalleryFixture(count: 300, imageSize: .small)
        let dir = TemporaryDirectory("watcher-checks")
        var configuration = try gallery.configuration(dir: dir.path)
        configuration.schedule.pollInterval = .seconds(3600)
        let agent = try await RunningAgent(configuration)
        #expect(await eventually { gallery.validNumbers.allSatisfy { gallery.isMirrored($0, in: dir) } })
        let keeper = agent.keeper
        let victim = dir.file("gallery_image_7.png")
        // A rescan of every file is queued (what SIGHUP does). The watcher's call (made here directly, with no
        // change of a person's queued) leaves it to the scheduler: nothing suspends, so the backlog read in the same
        // turn is what the call left.
        let left = await { @SyncActor in
            keeper.repairs.rescanAll()
            await keeper.repairs.checkPending(urgentOnly: true)
            return keeper.repairs.hasPendingChecks
        }()
        #expect(left, "the watcher's checks worked through the rescan backlog")
        // A person deletes a file while the rescan is queued or running: the watcher repairs it.
        await keeper.repairs.rescanAll()
        unlink(victim)
        #expect(await eventually { readBytes(victim) == gallery.server.imageBytes(7) }, "the deleted file was not repaired")
        #expect(await agent.stop() == .success)
        await gallery.stop()
    }
}
