import EmojiArtGallery
@testable import EmojiArtSync
import TestSupport
import Testing

/// A reload (`SIGHUP`, `systemctl reload`) asked for while a full pass runs gets a full pass of its own. The pass
/// already running read the feed before the request, so it cannot carry it out; before the fix its end cleared
/// the request, and the next pass only asked the gallery "changed since?" and walked nothing.
///
/// Ordered by events: the first pass is held at its first batch until the reload has been asked for.
@Suite(.timeLimit(.minutes(2)))
struct ReloadDuringAPassTests {
    @Test func aReloadAskedForDuringAFullPassGetsAFullPassOfItsOwn() async throws {
        let gallery = try await GalleryFixture(count: 12, imageSize: .small)
        let dir = TemporaryDirectory("reload-during-pass")
        let hooks = AgentTestHooks()
        let fullPassesBegun = Shared(0)
        let reloadAsked = Shared(false)
        hooks.setBeforePassBatch { batch in
            guard batch == 0 else { return }
            // The first full pass waits here until the reload below has been asked for.
            if fullPassesBegun.increment() == 1 {
                _ = await eventually(timeout: .seconds(60)) { reloadAsked.value }
            }
        }
        var configuration = try gallery.configuration(dir: dir.path)
        configuration.schedule.pollInterval = .seconds(3600)
        configuration.testHooks = hooks
        let agent = try await RunningAgent(configuration)

        #expect(await eventually(timeout: .seconds(60)) { fullPassesBegun.value == 1 }, "the first pass never began")
        let pass = await agent.keeper.reload()
        reloadAsked.set(true)
        await agent.keeper.waitForPass(pass)
        let begun = fullPassesBegun.value
        #expect(await agent.stop() == .success)
        await gallery.stop()

        #expect(begun == 2, "the reload's pass was not a full pass (full passes begun: \(begun))")
        for n in gallery.validNumbers { #expect(gallery.isMirrored(n, in: dir)) }
    }
}
