/// The failures the memory layer remembers, each with the time after which its key may be tried again, and
/// the earliest of those times kept as failures come and go.
///
/// The scheduler asks "is any retry due, and when is the next one?" every time it wakes; with ten thousand
/// items that answer no image (a large gallery's error items), walking them all for that was over half the CPU
/// of an agent polling a 100,000-asset gallery (perf). Here a question about a time before the earliest retry costs nothing, and the
/// earliest is found again by a walk only after the failure holding it went away.
struct FailureLedger {
    struct Failure {
        /// What the failure was, as `ImageLoader.FailureText.keeping` keeps it.
        var error: any Error
        var attempts: Int
        var retryAt: ContinuousClock.Instant
    }

    private var failures: [AssetKey.WithHash: Failure] = [:]
    /// The earliest `retryAt`; nil with no failures, or when it must be found again (`isEarliestKnown`).
    private var earliest: ContinuousClock.Instant?
    private var isEarliestKnown = true

    subscript(key: AssetKey) -> Failure? { failures.isEmpty ? nil : failures[AssetKey.WithHash(key)] }

    var count: Int { failures.count }
    var keys: [AssetKey] { failures.keys.map(\.key) }
    /// Changes whenever a failure is recorded or forgotten: what is derived from the ledger is kept until then.
    private(set) var version: UInt64 = 0

    mutating func record(_ failure: Failure, for key: AssetKey) {
        version &+= 1
        forget(key)
        failures[AssetKey.WithHash(key)] = failure
        if isEarliestKnown { earliest = earliest.map { min($0, failure.retryAt) } ?? failure.retryAt }
    }

    mutating func forget(_ key: AssetKey) {
        guard !failures.isEmpty, let removed = failures.removeValue(forKey: AssetKey.WithHash(key)) else { return }
        version &+= 1
        if isEarliestKnown, removed.retryAt == earliest { isEarliestKnown = false }
    }

    mutating func removeAll() {
        version &+= 1
        failures.removeAll()
        earliest = nil
        isEarliestKnown = true
    }

    /// Forgets the failures `shouldForget` picks; keeps the others, with their retry times.
    mutating func removeAll(where shouldForget: (Failure) -> Bool) {
        let before = failures.count
        failures = failures.filter { !shouldForget($0.value) }
        guard failures.count != before else { return }
        version &+= 1
        isEarliestKnown = false
    }

    /// When the earliest remembered failure may be retried (nil when none is remembered).
    mutating func earliestRetryAt() -> ContinuousClock.Instant? {
        if !isEarliestKnown {
            earliest = failures.values.lazy.map(\.retryAt).min()
            isEarliestKnown = true
        }
        return earliest
    }

    /// Keys whose retry time is `now` or earlier, sorted; nothing is walked when none can be.
    mutating func dueKeys(at now: ContinuousClock.Instant) -> [AssetKey] {
        guard let earliest = earliestRetryAt(), earliest <= now else { return [] }
        return failures.filter { $0.value.retryAt <= now }.map(\.key.key).sorted()
    }
}
