@testable import EmojiArtSync
import FoundationEssentials
import Testing

/// `OnceTally` keeps, for the report `--once` prints, the first failure of each key that never succeeded.
struct OnceTallyTests {
    /// A later listing of an error item is refused by the failure of the run's own first attempt at it
    /// (`ImageLoader.RememberedFailure`), and its batch can finish before the batch of that attempt: noted first,
    /// the refusal made the report say "(failed 1x; next attempt in 3490.4s)" for that one item of thousands, a
    /// retry that never comes once the run has ended. The report says what the attempt itself failed with.
    @Test func aRefusalByThisRunsOwnFailureIsReportedAsThatFailure() throws {
        let key = try AssetKey(feedURL: "/gallery/image/10090.png")
        let cause = SyncError(.invalidImage, "http://127.0.0.1/gallery/image/10090.png did not answer with a valid PNG")
        let refusal = ImageLoader.RememberedFailure(key: key, underlying: cause, attempts: 1, retryIn: .seconds(3490))
        let tally = OnceTally(total: 2)
        _ = tally.note(FeedPass.Outcome(position: 1, hit: nil, bytes: 0, failure: refusal))
        _ = tally.note(FeedPass.Outcome(position: 1, hit: nil, bytes: 0, failure: cause))
        let shown = try #require(tally.current.firstFailures[1] ?? nil)
        #expect("\(shown)" == "\(cause)")
        #expect(!"\(shown)".contains("next attempt"))
        #expect(tally.current.progress.failed == 1)
        #expect(!tally.current.succeeded(1))
    }

    /// Any other failure is reported as it came, and a key that succeeds later is no failure.
    @Test func otherFailuresAreKeptAsTheyCameAndASuccessClearsThem() throws {
        let key = try AssetKey(feedURL: "/gallery/image/7.png")
        let onRecord = UnusableAnswerOnRecord(
            key: key, answer: UnusableAnswer(tag: nil, reason: "not a PNG", answeredAt: .now), retryAt: .now.addingTimeInterval(60))
        let tally = OnceTally(total: 3)
        _ = tally.note(FeedPass.Outcome(position: 0, hit: nil, bytes: 0, failure: onRecord))
        _ = tally.note(FeedPass.Outcome(position: 2, hit: nil, bytes: 0, failure: SyncError(.server, "503")))
        _ = tally.note(FeedPass.Outcome(position: 2, hit: .network, bytes: 106, failure: nil))
        let shown = try #require(tally.current.firstFailures[0] ?? nil)
        #expect(shown is UnusableAnswerOnRecord)
        #expect(tally.current.succeeded(2))
        #expect(tally.current.progress.failed == 1)
    }
}
