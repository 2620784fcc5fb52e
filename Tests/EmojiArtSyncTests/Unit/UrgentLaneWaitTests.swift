@testable import EmojiArtSync
import TestSupport
import Testing

/// A pass waiting behind the urgent lane stops waiting when its task is cancelled (the agent stopping). Before,
/// the wait ignored cancellation: a pass held there when SIGTERM came, behind urgent checks the stopping watcher
/// would never run, kept the scheduler's service, and so the agent, from ever ending (seen as an agent that
/// logged `msg=stopping` and hung, with every thread idle).
@Suite(.timeLimit(.minutes(1)))
struct UrgentLaneWaitTests {
    @Test func aWaitingPassIsReleasedByCancellationThoughTheLaneStaysOpen() async {
        let lane = UrgentLane()
        await lane.set(open: true)
        let released = Shared(false)
        let pass = Task { @SyncActor in
            await lane.waitUntilClear()
            released.set(true)
        }
        #expect(await eventually(timeout: .seconds(30)) { await lane.passesHeldBack == 1 }, "the pass never waited")
        pass.cancel()
        let releasedByCancellation = await eventually(timeout: .seconds(30)) { released.value }
        #expect(await lane.isOpen)
        await lane.set(open: false)  // a pass still waiting (the bug) goes now, so the test ends either way
        await pass.value
        #expect(releasedByCancellation, "the cancelled pass went on waiting behind the open lane")
    }

    @Test func closingTheLaneReleasesEveryWaitingPass() async {
        let lane = UrgentLane()
        await lane.set(open: true)
        let passes = (0..<3).map { _ in Task { @SyncActor in await lane.waitUntilClear() } }
        #expect(await eventually(timeout: .seconds(30)) { await lane.passesHeldBack == 3 })
        await lane.set(open: false)
        for pass in passes { await pass.value }
    }
}
