import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import Synchronization
import TestSupport
import Testing

/// A `--once` run keeps the feed it accepted (`DIR/.emojiart-sync/feed.snapshot`, `FeedSnapshot`), and the next
/// run asks the gallery for the feed conditionally: on `304` the feed is read from the snapshot instead of being
/// downloaded and decoded again. A snapshot that is damaged, of another gallery, or of a feed that changed is
/// not used. Against the bundled gallery on 127.0.0.1, whose request log shows what it was asked and answered.
@Suite(.timeLimit(.minutes(2)))
struct FeedSnapshotTests {
    /// The gallery's answers to feed requests, in order.
    final class FeedAnswers: Sendable {
        private let statuses = Mutex<[Int]>([])
        var all: [Int] { statuses.withLock { $0 } }
        /// Whether the answers come to be `expected`: a request is recorded once its response is written, which
        /// may be just after the agent read it.
        func become(_ expected: [Int]) async -> Bool { await eventually(timeout: .seconds(10)) { all == expected } }
        func record(_ record: GalleryRequestRecord) {
            if record.path == "/gallery/images" { statuses.withLock { $0.append(record.status) } }
        }
    }

    private func snapshotPath(_ dir: TemporaryDirectory) -> String { dir.path + "/.emojiart-sync/" + FeedSnapshot.fileName }

    private func feedLines(_ dir: TemporaryDirectory) -> [String] {
        logLines(dir.path).filter { $0.contains("event=feed") }
    }

    /// What a run reports, in a form two runs can be compared by.
    private func outcome(_ report: SyncReport) -> (available: Int, failed: [String], entries: Int) {
        (report.available, report.failures.map(\.key.rawValue).sorted(), report.entries)
    }

    @Test func aSecondRunTakesTheFeedFromItsSnapshotWhenTheGalleryAnswers304() async throws {
        let answers = FeedAnswers()
        let gallery = try await GalleryFixture(count: 40, imageSize: .small, requestLogger: answers.record)
        let dir = TemporaryDirectory("feed-snapshot")
        let first = try await gallery.syncOnce(dir: dir.path)
        #expect(FileManager.default.fileExists(atPath: snapshotPath(dir)), "the first run kept no snapshot")
        let second = try await gallery.syncOnce(dir: dir.path)
        await gallery.stop()

        #expect(await answers.become([200, 304]), "the second run did not ask conditionally: \(answers.all)")
        #expect(feedLines(dir).map { $0.contains("body=decoded") } == [true, false], "\(feedLines(dir))")
        #expect(feedLines(dir).last?.contains("body=not_modified") == true, "\(feedLines(dir))")
        #expect(outcome(second) == outcome(first))
        #expect(second.entries == 3 * 40, "the book's feed lists each item three times")
        #expect(second.hits[.disk] == gallery.validNumbers.count, "\(second.hits)")
        for n in gallery.validNumbers { #expect(gallery.isMirrored(n, in: dir)) }
    }

    @Test func aSnapshotThatFailsItsChecksumIsNotUsedAndIsWrittenAgain() async throws {
        let answers = FeedAnswers()
        let gallery = try await GalleryFixture(count: 30, imageSize: .small, requestLogger: answers.record)
        let dir = TemporaryDirectory("feed-snapshot-damaged")
        let first = try await gallery.syncOnce(dir: dir.path)
        var bytes = try #require(FileManager.default.contents(atPath: snapshotPath(dir)))
        bytes[bytes.count / 2] ^= 0x40
        try bytes.write(to: URL(fileURLWithPath: snapshotPath(dir)))
        let second = try await gallery.syncOnce(dir: dir.path)
        await gallery.stop()

        #expect(await answers.become([200, 200]), "a damaged snapshot's validators were used: \(answers.all)")
        let refusal = feedLines(dir).first { $0.contains("snapshot not used") }
        #expect(refusal?.contains("checksum does not match") == true, "\(feedLines(dir))")
        #expect(feedLines(dir).last?.contains("body=decoded") == true)
        #expect(outcome(second) == outcome(first))
        let kept = try FeedSnapshot.decode(Array(try #require(FileManager.default.contents(atPath: snapshotPath(dir)))))
        #expect(try kept.feed().entryCount == 3 * 30, "the damaged snapshot was not written again")
    }

    @Test func aSnapshotOfAnotherGalleryIsNotUsed() async throws {
        let answers = FeedAnswers()
        let one = try await GalleryFixture(count: 12, imageSize: .small)
        let other = try await GalleryFixture(count: 20, imageSize: .small, requestLogger: answers.record)
        let dir = TemporaryDirectory("feed-snapshot-other-gallery")
        _ = try await one.syncOnce(dir: dir.path)
        await one.stop()
        let report = try await other.syncOnce(dir: dir.path) { $0.safety.maxDeletePercent = 100 }
        await other.stop()

        #expect(await answers.become([200]), "the other gallery was asked with the first one's validators: \(answers.all)")
        #expect(report.uniqueAssets == 20)
        #expect(feedLines(dir).last?.contains("body=decoded") == true)
    }

    @Test func aChangedFeedIsDecodedAndReplacesTheSnapshot() async throws {
        let answers = FeedAnswers()
        let gallery = try await GalleryFixture(count: 20, imageSize: .small, requestLogger: answers.record)
        let dir = TemporaryDirectory("feed-snapshot-changed")
        _ = try await gallery.syncOnce(dir: dir.path)
        gallery.server.setFaults(GalleryFaults(droppedItems: [3]))
        let changed = try await gallery.syncOnce(dir: dir.path)
        let third = try await gallery.syncOnce(dir: dir.path)
        await gallery.stop()

        #expect(await answers.become([200, 200, 304]), "\(answers.all)")
        #expect(changed.uniqueAssets == 19)
        #expect(third.uniqueAssets == 19, "the third run used the snapshot of the feed before the change")
        let kept = try FeedSnapshot.decode(Array(try #require(FileManager.default.contents(atPath: snapshotPath(dir)))))
        #expect(try kept.feed().uniqueKeys.count == 19)
    }

    /// The same bytes under a new `ETag` (a gallery whose plan changed where the feed does not show it): the run
    /// compares the body with the snapshot's digest and does not decode it, and the snapshot takes the new
    /// validators, so the next run is answered `304`.
    @Test func theSameBytesUnderNewValidatorsAreNotDecodedAndTheNextRunIsAnswered304() async throws {
        let answers = FeedAnswers()
        // A feed in one order at every request, as a static export serves it (the gallery shuffles it otherwise).
        let gallery = try await GalleryFixture(
            count: 20, faults: GalleryFaults(unshuffledFeed: true), imageSize: .small, requestLogger: answers.record)
        let dir = TemporaryDirectory("feed-snapshot-same-bytes")
        let first = try await gallery.syncOnce(dir: dir.path)
        gallery.server.setFaults(GalleryFaults(imageFaults: [10: .slow(milliseconds: 1)], unshuffledFeed: true))
        let second = try await gallery.syncOnce(dir: dir.path)
        let third = try await gallery.syncOnce(dir: dir.path)
        await gallery.stop()

        #expect(await answers.become([200, 200, 304]), "\(answers.all)")
        let bodies = feedLines(dir).compactMap { $0.split(separator: " ").first { $0.hasPrefix("body=") } }
        #expect(bodies == ["body=decoded", "body=unchanged", "body=not_modified"], "\(feedLines(dir))")
        #expect(outcome(second) == outcome(first))
        #expect(outcome(third) == outcome(first))
    }

    @Test func aDryRunKeepsNoSnapshot() async throws {
        let gallery = try await GalleryFixture(count: 10, imageSize: .small)
        let dir = TemporaryDirectory("feed-snapshot-dry-run")
        let out = TemporaryDirectory("feed-snapshot-dry-run-out")
        let run = try await AgentProcess.run(
            ["--dir", dir.path, "--server", gallery.baseURL, "--once", "--dry-run"], outputDirectory: out.path)
        await gallery.stop()
        #expect(run.stdout.contains("fetch"), "\(run.stdout) \(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: snapshotPath(dir)))
    }
}
