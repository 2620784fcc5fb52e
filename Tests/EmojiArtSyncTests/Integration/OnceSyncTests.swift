import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

/// `--once` against a real gallery on 127.0.0.1, real libcurl, real libpng, real files.
@Suite(.timeLimit(.minutes(2)))
struct OnceSyncTests {
    @Test func coldSyncWritesEveryValidAssetByteIdenticalAndNothingForErrorItems() async throws {
        let gallery = try await GalleryFixture()
        let dir = TemporaryDirectory("cold")
        let report = try await gallery.syncOnce(dir: dir.path)
        await gallery.stop()

        #expect(report.uniqueAssets == 29)
        #expect(report.entries == 87)
        #expect(report.available == gallery.validNumbers.count)
        #expect(Set(report.failures.map(\.key.rawValue)) == Set(gallery.errorNumbers.map { "/gallery/image?\($0)" }))
        #expect(ExitStatus.of(report) == .partial)
        for n in gallery.validNumbers {
            let bytes = try #require(readBytes(dir.file("gallery_image_\(n).png")), "missing image \(n)")
            #expect(bytes == gallery.server.imageBytes(n), "image \(n) differs from what the gallery served")
        }
        for n in gallery.errorNumbers {
            #expect(!FileManager.default.fileExists(atPath: dir.file("gallery_image_\(n).png")))
        }
        let assetFiles = dir.names().filter { $0.hasSuffix(".png") }
        #expect(assetFiles.count == gallery.validNumbers.count)
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty, "temporary files left behind")
    }

    @Test func duplicatesInTheFeedCauseOneNetworkFetchPerKeyAndMemoryHitsForTheRest() async throws {
        let gallery = try await GalleryFixture()
        let dir = TemporaryDirectory("dups")
        let report = try await gallery.syncOnce(dir: dir.path)
        for n in 1...gallery.count {
            #expect(gallery.server.requestCount(path: "/gallery/image?\(n)") == 1, "image \(n) fetched more than once")
        }
        await gallery.stop()
        let valid = gallery.validNumbers.count
        #expect(report.hits[.network] == valid)
        #expect(report.hits[.memory] == 2 * valid)
        #expect(report.hits[.disk, default: 0] == 0)
        let lines = logLines(dir.path)
        #expect(lines.filter { $0.contains("event=asset") && $0.contains("hit=network") }.count == valid)
        // The repeats are memory hits, counted in the pass's summary, not written: one line per key and pass.
        #expect(!lines.contains { $0.contains("event=asset") && $0.contains("hit=memory") })
        #expect(lines.contains { $0.contains("event=pass") && $0.contains("repeats=\(2 * valid)") })
        #expect(lines.contains { $0.contains("hit=network") && $0.contains("key=/gallery/image?3") })
    }

    @Test func secondRunTakesEverythingFromDiskAndAChangedFileIsFetchedAgain() async throws {
        let gallery = try await GalleryFixture()
        let dir = TemporaryDirectory("warm")
        _ = try await gallery.syncOnce(dir: dir.path)
        gallery.server.resetCounts()

        let warm = try await gallery.syncOnce(dir: dir.path)
        // Nothing is asked for: stored images are disk hits, the error items' answers are on record.
        #expect(gallery.validNumbers.allSatisfy { gallery.server.requestCount(path: "/gallery/image?\($0)") == 0 }, "a warm run must not fetch stored images")
        #expect(gallery.server.imageRequestCount == 0)
        #expect(warm.hits[.disk] == gallery.validNumbers.count)
        #expect(warm.hits[.network, default: 0] == 0)

        // Behind the agent's back: one file changed (same size, one byte), one truncated, one deleted.
        var changed = try #require(readBytes(dir.file("gallery_image_1.png")))
        changed[changed.count / 2] ^= 0xFF
        try writeBytes(changed, to: dir.file("gallery_image_1.png"))
        let truncated = try #require(readBytes(dir.file("gallery_image_2.png")))
        try writeBytes(Array(truncated.prefix(100)), to: dir.file("gallery_image_2.png"))
        try FileManager.default.removeItem(atPath: dir.file("gallery_image_3.png"))
        gallery.server.resetCounts()

        let repaired = try await gallery.syncOnce(dir: dir.path)
        #expect(gallery.server.imageRequestCount == 3)
        for n in [1, 2, 3] {
            #expect(gallery.server.requestCount(path: "/gallery/image?\(n)") == 1)
            #expect(readBytes(dir.file("gallery_image_\(n).png")) == gallery.server.imageBytes(n))
        }
        #expect(repaired.repairs == 3)
        #expect(ExitStatus.of(repaired) == .partial)
        await gallery.stop()
        let lines = logLines(dir.path)
        #expect(lines.contains { $0.contains("event=repair") && $0.contains("reason=corrupt") && $0.contains("key=/gallery/image?1") })
        #expect(lines.contains { $0.contains("event=repair") && $0.contains("reason=corrupt") && $0.contains("key=/gallery/image?2") })
        #expect(lines.contains { $0.contains("event=repair") && $0.contains("reason=missing") && $0.contains("key=/gallery/image?3") })
    }

    @Test func answersThatAreNotImagesAreNotAskedForAgainUntilTheirTagChanges() async throws {
        let gallery = try await GalleryFixture(count: 20)
        let port = try gallery.port()
        let dir = TemporaryDirectory("unusable")
        _ = try await gallery.syncOnce(dir: dir.path)
        #expect(gallery.errorNumbers.allSatisfy { gallery.server.requestCount(path: "/gallery/image?\($0)") == 1 })
        gallery.server.resetCounts()

        // A second run: the answers on record stand, still reported as failures, and no request is made.
        let warm = try await gallery.syncOnce(dir: dir.path)
        #expect(gallery.server.imageRequestCount == 0, "an answer on record was asked for again")
        #expect(Set(warm.failures.map(\.key.rawValue)) == Set(gallery.errorNumbers.map { "/gallery/image?\($0)" }))
        #expect(warm.failures.allSatisfy { $0.reason.contains("asked again after") }, "\(warm.failures)")
        #expect(ExitStatus.of(warm) == .partial)
        #expect(logLines(dir.path).contains { $0.contains("result=failed") && $0.contains("remembered=true") })

        // The background agent's first pass honours the same records.
        let agent = try await gallery.startAgent(dir: dir)
        let passed = await eventually { logLines(dir.path).contains { $0.contains("event=poll") && $0.contains("result=ok") } }
        #expect(await agent.stop() == .success)
        try #require(passed, "the agent's first pass did not end")
        #expect(gallery.server.imageRequestCount == 0, "the agent asked for an answer on record")

        // Once the record's time is up, they are asked for again.
        // (With no wait at all, a duplicate entry of the same pass may ask once more: at least once, then.)
        _ = try await gallery.syncOnce(dir: dir.path) { $0.http.retryPolicy = RetryPolicy(unusableAnswer: .zero) }
        #expect(gallery.errorNumbers.allSatisfy { gallery.server.requestCount(path: "/gallery/image?\($0)") >= 1 })
        await gallery.stop()

        // A restarted server gives every item a new tag: its answers are asked for again, at once.
        let restarted = GalleryServer(configuration: GalleryConfiguration(host: "127.0.0.1", port: port, count: 20))
        _ = try await restarted.start()
        _ = try await gallery.syncOnce(dir: dir.path)
        await restarted.stop()
        #expect(gallery.errorNumbers.allSatisfy { restarted.requestCount(path: "/gallery/image?\($0)") == 1 })
    }

    @Test func faultyResponsesWriteNothingAndAreReportedWhileTheRestSyncs() async throws {
        let faults = GalleryFaults(imageFaults: [1: .corrupt, 2: .truncated, 3: .serverError, 4: .endless])
        let gallery = try await GalleryFixture(count: 9, faults: faults)
        let dir = TemporaryDirectory("faults")
        let report = try await gallery.syncOnce(dir: dir.path) { configuration in
            configuration.http.maxBodySize = 1 << 20
        }
        await gallery.stop()
        let failed = Dictionary(uniqueKeysWithValues: report.failures.map { ($0.key.rawValue, $0.reason) })
        #expect(Set(failed.keys) == ["/gallery/image?1", "/gallery/image?2", "/gallery/image?3", "/gallery/image?4"])
        #expect(failed["/gallery/image?1"]?.contains("valid PNG") == true)
        #expect(failed["/gallery/image?3"]?.contains("500") == true)
        #expect(failed["/gallery/image?4"]?.lowercased().contains("limit") == true)
        for n in 1...4 {
            #expect(!FileManager.default.fileExists(atPath: dir.file("gallery_image_\(n).png")))
        }
        for n in 5...9 {
            #expect(readBytes(dir.file("gallery_image_\(n).png")) == gallery.server.imageBytes(n))
        }
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)
        #expect(ExitStatus.of(report) == .partial)
    }

    @Test func completeGalleryExitsSuccess() async throws {
        let gallery = try await GalleryFixture(count: 9)
        let dir = TemporaryDirectory("complete")
        let report = try await gallery.syncOnce(dir: dir.path)
        await gallery.stop()
        #expect(report.isComplete)
        #expect(ExitStatus.of(report) == .success)
        #expect(report.available == 9)
    }

    @Test func deadServerIsAFatalFeedError() async throws {
        let gallery = try await GalleryFixture(count: 3)
        let dir = TemporaryDirectory("dead")
        var configuration = try gallery.configuration(dir: dir.path)
        await gallery.stop()
        configuration.http.connectTimeout = .seconds(1)
        let agent = try await SyncAgent(configuration: configuration)
        defer { agent.shutdown() }
        await #expect(throws: (any Error).self) { try await agent.syncOnce() }
        #expect(logLines(dir.path).contains { $0.contains("event=feed") && $0.contains("result=failed") })
    }
}

/// `--once` removes the agent's files of items that left the feed, behind the same guard as the agent.
@Suite(.timeLimit(.minutes(2)))
struct OnceRemovalTests {
    @Test func aRunRemovesTheFilesOfItemsGoneFromTheFeedButNeverAMassDeletion() async throws {
        let gallery = try await GalleryFixture(count: 9)
        let dir = TemporaryDirectory("once-removal")
        _ = try await gallery.syncOnce(dir: dir.path)
        let mine = Array("not the agent's".utf8)
        try writeBytes(mine, to: dir.file("notes.txt"))

        // Item 3 leaves the feed: its file goes, nothing else does.
        gallery.server.setFaults(GalleryFaults(droppedItems: [3]))
        let smaller = try await gallery.syncOnce(dir: dir.path)
        #expect(smaller.removed == 1)
        #expect(smaller.deletionRefused == nil)
        #expect(!FileManager.default.fileExists(atPath: dir.file("gallery_image_3.png")))
        #expect([1, 2, 4, 5, 6, 7, 8, 9].allSatisfy { gallery.isMirrored($0, in: dir) })
        #expect(logLines(dir.path).contains { $0.contains("event=remove") && $0.contains("key=/gallery/image?3") })

        // Then six of the eight that are left (75% > the default 50%): refused, nothing deleted, and said.
        gallery.server.setFaults(GalleryFaults(droppedItems: [1, 2, 3, 4, 5, 6, 7]))
        let output = TemporaryDirectory("once-removal-out")
        let run = try await AgentProcess.run(
            ["--dir", dir.path, "--server", gallery.baseURL, "--once", "--quiet"], outputDirectory: output.path)
        await gallery.stop()
        #expect(run.status == 0)
        #expect(run.stderr.contains("refusing to delete 6 of 8 files"), "\(run.stderr)")
        #expect([1, 2, 4, 5, 6, 7].allSatisfy { FileManager.default.fileExists(atPath: dir.file("gallery_image_\($0).png")) })
        #expect(readBytes(dir.file("notes.txt")) == mine)
    }
}
