import EmojiArtGallery
import EmojiArtSync
import Foundation
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
        let wakeUps = await agent.keeper.wakeUps
        let requests = gallery.server.requestCount(path: "/gallery/images") + gallery.server.imageRequestCount
        try await Task.sleep(for: .seconds(2))
        #expect(await agent.keeper.wakeUps == wakeUps, "the scheduler woke up with nothing due")
        #expect(gallery.server.requestCount(path: "/gallery/images") + gallery.server.imageRequestCount == requests)
        // The status file shows the same counter, flat as well.
        let status = try AgentStatus.read(from: dir.file(".emojiart-sync/status.json"))
        #expect(status.wakeUps == wakeUps)
        #expect(await agent.stop() == .success)
        await gallery.stop()
    }

    @Test func aPassOverAHugeFeedKeepsABoundedWindowOfAccessesInFlight() async throws {
        // 5,000 items listed three times, hundreds of times the window; every image answers 500 at once, so the pass
        // is quick and the window, not the network, is what bounds the work alive at any moment.
        let gallery = try await GalleryFixture(count: 5_000, faults: GalleryFaults(allImages: .serverError))
        let dir = TemporaryDirectory("window")
        var window = 0
        let report = try await gallery.syncOnce(dir: dir.path) { configuration in
            configuration.concurrency = 4
            window = configuration.accessWindow
        }
        await gallery.stop()
        #expect(report.entries == 15_000)
        #expect(report.peakAccessesInFlight > 1)
        #expect(report.peakAccessesInFlight <= window, "pending accesses exceeded the window")
        #expect(window < 100)
    }
}
