import CurlHTTP
import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

/// A feed larger than the body buffer (256 KiB) goes to a temporary file as it arrives and is read from the
/// file's mapping, not held in memory: the pass sees the whole feed, and no temporary file is left.
@Suite(.timeLimit(.minutes(3)))
struct LargeFeedTests {
    @Test func aFeedLargerThanTheBodyBufferIsReadThroughItsFileAndLeavesNoTemporaryFile() async throws {
        let gallery = try await GalleryFixture(count: 1_000, imageSize: .small)
        let dir = TemporaryDirectory("large-feed")
        let report = try await gallery.syncOnce(dir: dir.path)
        let configuration = try gallery.configuration(dir: dir.path)
        let client = try CurlHTTPClient(configuration: configuration.httpClient)
        let feedBytes = try await client.get(configuration.http.server.feedURL, maxBodySize: 64 << 20).body.count
        client.shutdown()
        await gallery.stop()

        #expect(feedBytes > StreamedBodyFile.bufferSize, "the feed (\(feedBytes) bytes) fits the buffer: not this path")
        #expect(report.entries == 3_000)
        #expect(report.uniqueAssets == 1_000)
        for n in gallery.validNumbers { #expect(gallery.isMirrored(n, in: dir)) }
        let left = try FileManager.default.contentsOfDirectory(atPath: SyncDirectory(dir.path).temporaryDirectory)
        #expect(left.isEmpty, "temporary files left: \(left)")
    }

    /// A cold pass holds no more jobs waiting to start than its window and the batches it answers ahead, whatever
    /// the feed's size: each job is dropped as it starts. Before, the queue was an array emptied only when it ran
    /// dry, which a cold pass never lets it do: it held every job of the pass (all 1,500 here; 54 MB of heap at
    /// 100,000 assets).
    @Test func aColdPassHoldsOnlyTheJobsItHasNotStarted() async throws {
        let gallery = try await GalleryFixture(count: 1_500, imageSize: .small)
        let dir = TemporaryDirectory("pass-queue")
        var window = 0
        let report = try await gallery.syncOnce(dir: dir.path) {
            $0.http.concurrency = 2
            window = $0.onceAccessWindow
        }
        await gallery.stop()
        #expect(report.available == gallery.validNumbers.count)
        let bound = window + FeedPass.answersAhead * FeedPass.batchSize
        #expect(report.peakJobsQueued <= bound, "\(report.peakJobsQueued) jobs held for a window of \(window)")
        #expect(bound < gallery.validNumbers.count, "the feed is too small to tell")
    }
}
