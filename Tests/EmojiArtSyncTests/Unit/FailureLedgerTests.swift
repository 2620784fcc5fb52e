@testable import EmojiArtSync
import EmojiArtPNG
import FoundationEssentials
import Testing

/// The remembered failures and their earliest retry time, kept as failures come and go.
@Suite struct FailureLedgerTests {
    @Test func theEarliestRetryFollowsRecordsAndForgetsAndOnlyDueKeysAreReturned() throws {
        let start = ContinuousClock.now
        var ledger = FailureLedger()
        #expect(ledger.earliestRetryAt() == nil)
        let keys = try (1...3).map { try AssetKey(feedURL: "/gallery/image?\($0)") }
        for (offset, key) in keys.enumerated() {
            ledger.record(.init(error: SyncError(.server, "x"), attempts: 1, retryAt: start + .seconds(10 * (offset + 1))), for: key)
        }
        #expect(ledger.earliestRetryAt() == start + .seconds(10))
        #expect(ledger.dueKeys(at: start + .seconds(5)).isEmpty)
        #expect(ledger.dueKeys(at: start + .seconds(20)) == [keys[0], keys[1]])

        ledger.forget(keys[0])  // the earliest goes: the next one takes its place
        #expect(ledger.earliestRetryAt() == start + .seconds(20))
        ledger.record(.init(error: SyncError(.server, "x"), attempts: 2, retryAt: start + .seconds(50)), for: keys[1])
        #expect(ledger.earliestRetryAt() == start + .seconds(30), "a record replaced with a later time moves the earliest")
        #expect(ledger.count == 2)
        ledger.removeAll()
        #expect(ledger.earliestRetryAt() == nil)
        #expect(ledger.dueKeys(at: start + .seconds(100)).isEmpty)
    }

    /// A gallery's error items fail with the same words around each item's url: the ledger keeps those words
    /// once (no allocation of its own per failing key, which held pages the agent could not give back), gives
    /// each failure back with its own url in place, and drops a text with its last failure.
    @Test func failuresWithTheSameWordsShareTheirTextAndGiveItBackWhole() throws {
        let start = ContinuousClock.now
        var ledger = FailureLedger()
        let keys = try (1...500).map { try AssetKey(feedURL: "/gallery/image/\($0 * 10).png") }
        func answer(_ key: AssetKey) -> SyncError {
            SyncError(
                .invalidImage, "http://127.0.0.1:8080\(key.rawValue) did not answer with a valid PNG: not a PNG",
                underlying: PNGDefect(.notPNG, "the data starts \"{\\\"error\\\": ...\""))
        }
        for key in keys {
            ledger.record(.init(error: answer(key), attempts: 1, retryAt: start + .seconds(3600)), for: key)
        }
        let outage = try AssetKey(feedURL: "/gallery/image/3.png")
        let refused = SyncError(.server, "connection refused by 127.0.0.1:8080 (is the gallery running?)")
        ledger.record(.init(error: refused, attempts: 2, retryAt: start + .seconds(4)), for: outage)
        #expect(ledger.textsKept == 3, "the words before and after the url, and the outage's text")
        for key in keys {
            let kept = try #require(ledger[key])
            #expect(String(describing: kept.error) == String(describing: answer(key)))
            #expect(ImageLoader.answeredButUnusable(kept.error), "still an answer that was no image")
            #expect(kept.attempts == 1 && kept.retryAt == start + .seconds(3600))
        }
        let outageKept = try #require(ledger[outage])
        #expect(String(describing: outageKept.error) == String(describing: refused))
        #expect(ledger.attempts(of: outage) == 2 && !ImageLoader.answeredButUnusable(outageKept.error))

        // The transient failure goes as the gallery comes back; the error items keep their hour.
        ledger.removeAll { !ImageLoader.answeredButUnusable($0.error) }
        #expect(ledger[outage] == nil && ledger.count == keys.count && ledger.textsKept == 2)
        for key in keys.dropLast() { ledger.forget(key) }
        #expect(ledger.textsKept == 2, "the last failure still uses both")
        ledger.forget(keys[keys.count - 1])
        #expect(ledger.textsKept == 0 && ledger.count == 0)
        // A text whose words came back is kept again, whole.
        ledger.record(.init(error: answer(keys[0]), attempts: 3, retryAt: start), for: keys[0])
        let again = try #require(ledger[keys[0]])
        #expect(String(describing: again.error) == String(describing: answer(keys[0])))
    }

    /// A refusal on record is kept as the error it is: what `forgetTransientFailures` and the log tell apart.
    @Test func aRefusalOnRecordIsKeptAsItIs() throws {
        var ledger = FailureLedger()
        let key = try AssetKey(feedURL: "/gallery/image/10.png")
        let onRecord = UnusableAnswerOnRecord(
            key: key, answer: UnusableAnswer(tag: "A", reason: "not a PNG", answeredAt: .now), retryAt: .now.addingTimeInterval(60))
        ledger.record(.init(error: onRecord, attempts: 1, retryAt: .now + .seconds(60)), for: key)
        #expect(try #require(ledger[key]).error is UnusableAnswerOnRecord)
        #expect(ledger.textsKept == 0)
    }
}
