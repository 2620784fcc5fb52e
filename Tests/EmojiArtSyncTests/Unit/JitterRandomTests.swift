@testable import EmojiArtSync
import Testing

/// Jitter comes from a per-process sequence (no system call per number): it must still spread, within its range.
@Suite struct JitterRandomTests {
    @Test func numbersStayInTheirRangeAndSpread() {
        let numbers = (0..<200).map { _ in JitterRandom.number(in: 0.9...1.1) }
        #expect(numbers.allSatisfy { (0.9...1.1).contains($0) })
        #expect(Set(numbers).count > 190)
        #expect(numbers.contains { $0 < 0.95 } && numbers.contains { $0 > 1.05 })
    }

    @Test func retryDelaysAreJitteredBelowTheirCeiling() {
        let policy = RetryPolicy(base: .seconds(2), cap: .seconds(300), jitter: 0.2)
        let delays = (0..<50).map { _ in policy.delay(afterAttempt: 1) }
        #expect(delays.allSatisfy { $0 <= .seconds(2) && $0 >= .milliseconds(1600) })
        #expect(Set(delays).count > 40)
    }
}
