@testable import EmojiArtSync
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
}
