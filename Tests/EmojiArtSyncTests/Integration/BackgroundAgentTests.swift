import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import Logging
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The background agent in process: real inotify on real files, the real gallery over HTTP.
@Suite(.timeLimit(.minutes(10)))
struct BackgroundAgentTests {
    @Test func everyKindOfDamageIsRepairedAtOnceAndLogged() async throws {
        let gallery = try await GalleryFixture(count: 9)
        let dir = TemporaryDirectory("repair")
        let agent = try await gallery.startAgent(dir: dir)
        let outside = TemporaryDirectory("moved-away")

        // 1 deleted, 2 truncated, 3 overwritten in place, 4 replaced by rename with another valid PNG,
        // 5 moved away, 6 replaced by a symlink.
        try FileManager.default.removeItem(atPath: dir.file("gallery_image_1.png"))
        truncate(dir.file("gallery_image_2.png"), 10)
        var bytes = try #require(readBytes(dir.file("gallery_image_3.png")))
        bytes[bytes.count / 3] ^= 0x55
        let fd = open(dir.file("gallery_image_3.png"), O_WRONLY)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        try writeBytes(gallery.server.imageBytes(7), to: dir.file("replacement.tmp"))
        rename(dir.file("replacement.tmp"), dir.file("gallery_image_4.png"))
        rename(dir.file("gallery_image_5.png"), outside.file("kept.png"))

        let repaired = await eventually(timeout: .seconds(30)) { (1...5).allSatisfy { gallery.isMirrored($0, in: dir) } }
        #expect(repaired)
        #expect(readBytes(outside.file("kept.png")) == gallery.server.imageBytes(5), "a file moved away is the user's now")
        // A file is in place once its batch is committed; its hit=network line is written right after that. The
        // first sync wrote a hit=network line for each key too, so what is waited for is one after the repair line.
        let expected = [(1, "missing"), (2, "corrupt"), (3, "corrupt"), (4, "corrupt"), (5, "missing")]
        _ = await eventually(timeout: .seconds(30)) {
            let lines = logLines(dir.path)
            return expected.allSatisfy { n, _ in
                let key = "key=/gallery/image?\(n)"
                guard let repair = lines.lastIndex(where: { $0.contains("event=repair") && $0.contains(key) }) else { return false }
                return lines[(repair + 1)...].contains { $0.contains("event=asset") && $0.contains("hit=network") && $0.contains(key) }
            }
        }
        let lines = logLines(dir.path)
        for (n, reason) in expected {
            let key = "key=/gallery/image?\(n)"
            let repair = lines.lastIndex { $0.contains("event=repair") && $0.contains("reason=\(reason)") && $0.contains(key) }
            let network = lines.lastIndex { $0.contains("event=asset") && $0.contains("hit=network") && $0.contains(key) }
            #expect(repair != nil, "no repair line for \(n)")
            #expect(network != nil && repair! < network!, "repair of \(n) not followed by its hit=network line: \(lines.filter { $0.contains(key + " ") || $0.hasSuffix(key) })")
        }
        #expect(await agent.stop() == .success)
        await gallery.stop()
    }

    @Test func theAgentsOwnWritesNeverTriggerRepairs() async throws {
        let gallery = try await GalleryFixture(count: 9)
        let dir = TemporaryDirectory("noloop")
        // Debug: an unchanged feed's poll (a 304) is logged at that level, and the test counts polls.
        let agent = try await gallery.startAgent(dir: dir) { $0.logging.level = .debug }
        // A second poll has rechecked every file after the inotify events of the agent's own writes.
        #expect(await eventually { pollLines(dir) >= 1 })
        await agent.keeper.pollNow()
        #expect(await eventually { pollLines(dir) >= 2 })
        #expect(gallery.server.imageRequestCount == 9)
        #expect(!logLines(dir.path).contains { $0.contains("event=repair") })
        // The user's own new files are not reported either. Deleting one of the agent's files afterwards and
        // seeing it repaired proves the watcher got past the user's events (inotify reports them in order).
        try writeBytes(Array("hello".utf8), to: dir.file("notes.txt"))
        try writeBytes(gallery.server.imageBytes(1), to: dir.file("my-copy.png"))
        unlink(dir.file("gallery_image_9.png"))
        #expect(await eventually { gallery.isMirrored(9, in: dir) })
        #expect(gallery.server.imageRequestCount == 10, "only the deleted file was fetched again")
        #expect(logLines(dir.path).filter { $0.contains("event=repair") }.count == 1)
        #expect(!logLines(dir.path).contains { $0.contains("level=warning") || $0.contains("level=error") })
        #expect(await agent.stop() == .success)
        #expect(readBytes(dir.file("notes.txt")) == Array("hello".utf8))
        await gallery.stop()
    }

    /// A burst of deletions larger than the agent's window of pending accesses (64 at `--concurrency 1`, its
    /// smallest): every file comes back. 130 deletions, over twice the window, show it; thousands belong in
    /// contrib/bench/repair-latency.sh.
    @Test func aBurstOfDeletionsLargerThanTheAccessWindowAllComeBack() async throws {
        let gallery = try await GalleryFixture(count: 150, imageSize: .small)
        let dir = TemporaryDirectory("burst")
        let agent = try await gallery.startAgent(dir: dir) { $0.http.concurrency = 1 }
        var configuration = try gallery.configuration(dir: dir.path)
        configuration.http.concurrency = 1
        let victims = Array(gallery.validNumbers.prefix(130))
        #expect(victims.count > 2 * configuration.accessWindow)
        for n in victims { unlink(dir.file("gallery_image_\(n).png")) }
        let back = await eventually(timeout: .seconds(300)) { victims.allSatisfy { gallery.isMirrored($0, in: dir) } }
        #expect(back)
        #expect(await agent.stop() == .success)
        await gallery.stop()
    }

    @Test func aGalleryDownAtStartIsSyncedSoonAfterItComesUp() async throws {
        let probe = try await GalleryFixture(count: 3)
        let port = try probe.port()
        await probe.stop()
        let dir = TemporaryDirectory("down")
        var configuration = try probe.configuration(dir: dir.path)
        configuration.schedule.pollInterval = .seconds(3600)
        let agent = try await RunningAgent(configuration)
        // The agent has tried the feed and failed: it is in its retry loop when the gallery comes up.
        #expect(await eventually { logLines(dir.path).contains { $0.contains("event=poll") && $0.contains("result=failed") } })
        let gallery = GalleryServer(configuration: GalleryConfiguration(host: "127.0.0.1", port: port, count: 3))
        _ = try await gallery.start()
        // Synced on the feed's retry (1 s after the first failure, doubling up to 30 s), not at the hour's poll.
        let synced = await eventually {
            (1...3).allSatisfy { readBytes(dir.file("gallery_image_\($0).png")) == gallery.imageBytes($0) }
        }
        #expect(synced)
        #expect(await agent.stop() == .success)
        await gallery.stop()
    }

    @Test func anEmptyFeedOrAMassRemovalDeletesNothingUntilAllowed() async throws {
        let gallery = try await GalleryFixture(count: 9)
        let dir = TemporaryDirectory("guard")
        let agent = try await gallery.startAgent(dir: dir)
        gallery.server.setFaults(GalleryFaults(emptyFeed: true))
        let polls = gallery.server.requestCount(path: "/gallery/images")
        await agent.keeper.pollNow()
        #expect(await eventually { gallery.server.requestCount(path: "/gallery/images") > polls })
        // The poll is over (its line is written after the removal step) before anything is checked.
        #expect(await eventually { logLines(dir.path).contains { $0.contains("event=poll") && $0.contains("result=refused") } })
        #expect((1...9).allSatisfy { gallery.isMirrored($0, in: dir) })
        #expect(logLines(dir.path).contains { $0.contains("event=delete_guard") && $0.contains("would_delete=9") })
        #expect(await agent.stop() == .success)
        let port = try gallery.port()
        await gallery.stop()

        // The gallery comes back with 3 of its 9 items: 6 of 9 (66%) would go, over the default 50%.
        let smaller = GalleryServer(configuration: GalleryConfiguration(host: "127.0.0.1", port: port, count: 3))
        _ = try await smaller.start()
        let guarded = try await RunningAgent({ var c = try gallery.configuration(dir: dir.path); c.schedule.pollInterval = .seconds(3600); return c }())
        #expect(await eventually { logLines(dir.path).contains { $0.contains("event=delete_guard") && $0.contains("would_delete=6") } })
        #expect((4...9).allSatisfy { FileManager.default.fileExists(atPath: dir.file("gallery_image_\($0).png")) })
        #expect(await guarded.stop() == .success)

        // The user confirms with --max-delete 100: the six go, the user's file stays.
        try writeBytes(Array("mine".utf8), to: dir.file("mine.txt"))
        let allowed = try await RunningAgent({ var c = try gallery.configuration(dir: dir.path); c.safety.maxDeletePercent = 100; c.schedule.pollInterval = .seconds(3600); return c }())
        #expect(await eventually { (4...9).allSatisfy { !FileManager.default.fileExists(atPath: dir.file("gallery_image_\($0).png")) } })
        #expect((1...3).allSatisfy { FileManager.default.fileExists(atPath: dir.file("gallery_image_\($0).png")) })
        #expect(readBytes(dir.file("mine.txt")) == Array("mine".utf8))
        #expect(await allowed.stop() == .success)
        await smaller.stop()
    }
}

/// Regressions found by the soak test.
@Suite(.timeLimit(.minutes(2)))
struct BackgroundAgentRetryTests {
    /// A file deleted while the gallery failed for it used to stay missing until the next feed poll (an hour
    /// here): retries only looked at keys with no manifest record, and a deleted file still has one.
    @Test func aRepairThatFailedIsRetriedWhenItsBackoffExpires() async throws {
        let gallery = try await GalleryFixture(count: 5)
        let dir = TemporaryDirectory("retry-repair")
        let agent = try await gallery.startAgent(dir: dir)
        gallery.server.setFaults(GalleryFaults(imageFaults: [1: .serverError, 2: .corrupt]))
        try FileManager.default.removeItem(atPath: dir.file("gallery_image_1.png"))
        truncate(dir.file("gallery_image_2.png"), 5)
        #expect(await eventually {
            gallery.server.requestCount(path: "/gallery/image?1") >= 2 && gallery.server.requestCount(path: "/gallery/image?2") >= 2
        })
        gallery.server.setFaults(.none)
        // The first retry comes after about 2 s (RetryPolicy's base, less jitter): well inside 15 s.
        let back = await eventually(timeout: .seconds(15)) { gallery.isMirrored(1, in: dir) && gallery.isMirrored(2, in: dir) }
        #expect(back)
        #expect(await agent.stop() == .success)
        await gallery.stop()
    }
}

/// How many feed polls the agent in `dir` has finished (`event=poll` lines, failed ones included).
func pollLines(_ dir: TemporaryDirectory) -> Int {
    logLines(dir.path).filter { $0.split(separator: " ").contains("event=poll") }.count
}
