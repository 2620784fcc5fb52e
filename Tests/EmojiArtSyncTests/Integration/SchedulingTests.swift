import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

/// How the agent spends its time: requests that arrive mid-work are never lost, idle is idle, and a pass over
/// a large feed keeps a bounded window of work in flight. Counters, not clocks.
@Suite(.timeLimit(.minutes(3)))
struct SchedulingTests {
    @Test func aPollAskedForWhileAPollRunsRunsRightAfterIt() async throws {
        let gallery = try await GalleryFixture(count: 5)
        let dir = TemporaryDirectory("coalesce")
        let agent = try await gallery.startAgent(dir: dir)
        let feedPath = "/gallery/images"
        let before = gallery.server.requestCount(path: feedPath)
        // Every answer now takes a second, so the poll below is surely still running when the second request comes.
        gallery.server.setFaults(GalleryFaults(latencyMilliseconds: 1000))
        await agent.keeper.pollNow()
        let started = await eventually { gallery.server.requestCount(path: feedPath) > before }
        try #require(started)
        await agent.keeper.pollNow()  // while the first poll waits for its feed
        gallery.server.setFaults(.none)
        let second = await eventually(timeout: .seconds(60)) { gallery.server.requestCount(path: feedPath) >= before + 2 }
        #expect(second, "the poll asked for during a poll never ran (interval is an hour)")
        #expect(await agent.stop() == .success)
        await gallery.stop()
    }

    @Test func anIdleAgentDoesNotWakeUp() async throws {
        let gallery = try await GalleryFixture(count: 5)
        let dir = TemporaryDirectory("idle")
        let agent = try await gallery.startAgent(dir: dir)
        // Settled: the first poll has finished (its log line is written at its end).
        let settled = await eventually { logLines(dir.path).contains { $0.contains("event=poll") && $0.contains("result=ok") } }
        try #require(settled)
        // Asleep, and nothing due before the next poll (an hour, less up to 10 % jitter): no tick, no retry. The
        // wait is for the state itself; a fixed sleep here proved only that nothing happened in those seconds.
        let idle = await eventually {
            guard let sleep = agent.background.schedulerAsleep else { return false }
            return sleep.until.map { ContinuousClock.now.duration(to: $0) > .seconds(50 * 60) } ?? true
        }
        #expect(idle, "the scheduler sleeps until \(String(describing: agent.background.schedulerAsleep))")
        let wakeUps = await agent.keeper.wakeUps
        // The status file shows the same counter (published within a quarter of a second of a change).
        #expect(await eventually { (try? AgentStatus.read(from: dir.file(".emojiart-sync/status.json")))?.wakeUps == wakeUps })
        #expect(await agent.stop() == .success)
        await gallery.stop()
    }

    /// Measured at the gallery, not by the agent's own counter (which its window caps by construction, so an
    /// assertion on it could not fail): each request takes 2 ms in the server's handler, and the server counts
    /// how many it was answering at once. That the transfers overlap at all is made certain, not likely: the
    /// gallery holds the first image request until a second one arrives (a barrier; a client that sent one at
    /// a time would leave it waiting until the barrier's timeout, and the peak would say 1). Timing alone made
    /// this flaky: four 2 ms transfers on a loaded machine often ran one after another.
    @Test func aPassOverAHugeFeedNeverHasMoreRequestsInFlightThanItsConcurrency() async throws {
        // 300 items listed three times, three times the access window (256 at concurrency 4); every image answers
        // 500 (no retries), so the pass is quick and the concurrency, not the network, bounds the requests in flight.
        let gallery = try await GalleryFixture(
            count: 300, faults: GalleryFaults(latencyMilliseconds: 2, allImages: .serverError))
        let dir = TemporaryDirectory("window")
        let concurrency = 4
        gallery.server.holdImageRequests(untilAnswering: 2)
        let report = try await gallery.syncOnce(dir: dir.path) { configuration in
            configuration.http.concurrency = concurrency
            configuration.http.retries = 0
        }
        await gallery.stop()
        #expect(report.entries == 900)
        let peak = gallery.server.peakRequestsInFlight
        #expect(peak > 1, "the transfers overlapped")
        #expect(peak <= concurrency, "the gallery answered \(peak) requests at once")
    }
}
