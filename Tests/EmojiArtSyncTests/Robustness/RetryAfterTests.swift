import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A gallery that answers `429` or `503` with `Retry-After` is obeyed: the request times the gallery recorded
/// show no request inside the window it asked for and one after it. The windows are 2-3 s; every assertion is on
/// recorded times once the later request has arrived, never on an absence after a sleep.
@Suite(.timeLimit(.minutes(2)))
struct RetryAfterTests {
    /// How far apart two arrivals are.
    static func gap(_ times: [ContinuousClock.Instant], _ first: Int, _ second: Int) -> Duration {
        times[first].duration(to: times[second])
    }

    @Test("an image's Retry-After is waited out before it is asked for again", arguments: [
        Throttle(status: 429, seconds: 2), Throttle(status: 503, seconds: 2, asHTTPDate: true),
    ])
    func imageWaitsAsTold(_ throttle: Throttle) async throws {
        let gallery = try await GalleryFixture(count: 3, faults: GalleryFaults(imageFaults: [2: .throttle(throttle)]))
        let dir = TemporaryDirectory("retry-after")
        // One retry: before this change it came 250 ms after the answer that asked for 2 s.
        let report = try await gallery.syncOnce(dir: dir.path) { $0.http.retries = 1 }
        #expect(report.isComplete, "the retry after the wait got the image")
        let times = gallery.server.requestTimes(path: "/gallery/image?2")
        try #require(times.count == 2, "one throttled request, one after the window: \(times.count)")
        #expect(Self.gap(times, 0, 1) >= .milliseconds(1_990), "the second request came inside the window")
        #expect(gallery.isMirrored(2, in: dir))
        #expect(logLines(dir.path).contains {
            $0.contains("event=wait") && $0.contains("status=\(throttle.status)") && $0.contains("scope=url")
        })
        await gallery.stop()
    }

    @Test("a Retry-After longer than --max-retry-after is cut to it")
    func waitIsCapped() async throws {
        let throttle = Throttle(status: 429, seconds: 3600)
        let gallery = try await GalleryFixture(count: 3, faults: GalleryFaults(imageFaults: [2: .throttle(throttle)]))
        let dir = TemporaryDirectory("retry-after-cap")
        let report = try await gallery.syncOnce(dir: dir.path) {
            $0.http.retries = 1
            $0.http.maxRetryAfter = .seconds(1)
        }
        #expect(report.failures.map(\.key.rawValue) == ["/gallery/image?2"], "still throttled after the capped wait")
        let times = gallery.server.requestTimes(path: "/gallery/image?2")
        try #require(times.count == 2)
        #expect(Self.gap(times, 0, 1) >= .milliseconds(990))
        #expect(logLines(dir.path).contains { $0.contains("event=wait") && $0.contains("capped=true") })
        await gallery.stop()
    }

    /// The feed's Retry-After pauses the whole gallery: a repair asked for during the pause goes out after it,
    /// and so does the next poll; `status` says what is waited for until when.
    @Test func theFeedsRetryAfterHoldsBackImagesToo() async throws {
        let gallery = try await GalleryFixture(count: 5)
        let dir = TemporaryDirectory("retry-after-feed")
        let agent = try await gallery.startAgent(dir: dir)
        gallery.server.setFaults(GalleryFaults(feedThrottle: Throttle(status: 503, seconds: 3)))
        gallery.server.resetCounts()
        await agent.keeper.pollNow()
        #expect(await eventually {
            logLines(dir.path).contains { $0.contains("event=wait") && $0.contains("scope=gallery") && $0.contains("status=503") }
        }, "the log says the gallery asked to wait")
        // A person deletes a file during the pause: its repair waits for the pause to end.
        unlink(dir.file("gallery_image_3.png"))
        let status = await eventually(timeout: .seconds(2)) {
            (try? AgentStatus.read(from: dir.file(".emojiart-sync/status.json")))?.waiting?.scope == "gallery"
        }
        #expect(status, "status names the gallery's pause")
        #expect(await eventually { gallery.isMirrored(3, in: dir) }, "repaired after the pause")
        #expect(await eventually { gallery.server.requestTimes(path: "/gallery/images").count >= 2 }, "polled again after the pause")
        let feed = gallery.server.requestTimes(path: "/gallery/images")
        let images = gallery.server.imageRequestTimes
        try #require(!images.isEmpty)
        #expect(images.allSatisfy { feed[0].duration(to: $0) >= .milliseconds(2_990) }, "an image was asked for during the pause")
        #expect(Self.gap(feed, 0, 1) >= .milliseconds(2_990), "the feed was polled again during the pause")
        #expect(await agent.stop() == .success)
        await gallery.stop()
    }

    @Test("status prints what is waited for and until when")
    func statusLine() {
        var status = AgentStatus(pid: 1, startedAt: Date(), directory: "/d", server: "http://g")
        let now = Date()
        status.waiting = AgentStatus.Waiting(scope: "gallery", urls: 1, status: 503, until: now.addingTimeInterval(90))
        let text = status.humanReadable(now: now)
        #expect(text.contains("waiting:"))
        #expect(text.contains("the whole gallery (the feed answered HTTP 503 with Retry-After) until "))
        #expect(text.contains("1m30s from now"))
        status.waiting = AgentStatus.Waiting(scope: "urls", urls: 3, status: 429, until: now.addingTimeInterval(5))
        #expect(status.humanReadable(now: now).contains("3 images (HTTP 429 with Retry-After)"))
        #expect(!status.humanReadable(now: now.addingTimeInterval(6)).contains("waiting:"), "an ended wait is not shown")
    }
}
