/// The failures the memory layer remembers, each with the time after which its key may be tried again, and
/// the earliest of those times kept as failures come and go.
///
/// The scheduler asks "is any retry due, and when is the next one?" every time it wakes; with ten thousand
/// items that answer no image (a large gallery's error items), walking them all for that was over half the CPU
/// of an agent polling a 100,000-asset gallery (perf). Here a question about a time before the earliest retry costs nothing, and the
/// earliest is found again by a walk only after the failure holding it went away.
///
/// A failure is kept as its text, in a `FailureTextTable` shared by all of them (no allocation of its own per
/// failing key), except a refusal on record (`UnusableAnswerOnRecord`), kept as it is: it refers to its index
/// row's values, and formatting its text would cost a warm pass a timestamp for each of 10,000 error items.
/// `subscript` gives the failure back as an error (`ImageLoader.FailureText`), made when asked.
struct FailureLedger {
    struct Failure {
        var error: any Error
        var attempts: Int
        var retryAt: ContinuousClock.Instant
    }

    /// A failure as the ledger holds it.
    private struct Kept {
        enum Cause {
            /// Kept as it is (a refusal on record).
            case error(any Error)
            /// Kept as its text, and whether it was an answer that was no image (`ImageLoader.answeredButUnusable`).
            case text(FailureTextTable.Parts, wasUnusableAnswer: Bool)
        }
        var cause: Cause
        var attempts: Int
        var retryAt: ContinuousClock.Instant
    }

    private var failures: [AssetKey.WithHash: Kept] = [:]
    private var texts = FailureTextTable()
    /// The earliest `retryAt`; nil with no failures, or when it must be found again (`isEarliestKnown`).
    private var earliest: ContinuousClock.Instant?
    private var isEarliestKnown = true

    subscript(key: AssetKey) -> Failure? {
        guard !failures.isEmpty, let kept = failures[AssetKey.WithHash(key)] else { return nil }
        return failure(kept, of: key)
    }

    /// How many times `key` has failed in a row, if a failure of it is remembered (no error made).
    func attempts(of key: AssetKey) -> Int? {
        failures.isEmpty ? nil : failures[AssetKey.WithHash(key)]?.attempts
    }

    /// Texts kept for the failures (for tests: one per distinct text, whatever the number of keys).
    var textsKept: Int { texts.count }

    var count: Int { failures.count }
    var keys: [AssetKey] { failures.keys.map(\.key) }
    /// Changes whenever a failure is recorded or forgotten: what is derived from the ledger is kept until then.
    private(set) var version: UInt64 = 0

    mutating func record(_ failure: Failure, for key: AssetKey) {
        version &+= 1
        forget(key)
        let cause: Kept.Cause
        switch failure.error {
        case is UnusableAnswerOnRecord:
            cause = .error(failure.error)
        case let text as ImageLoader.FailureText:
            cause = .text(texts.keep(text.description, of: key), wasUnusableAnswer: text.wasUnusableAnswer)
        default:
            cause = .text(
                texts.keep(String(describing: failure.error), of: key),
                wasUnusableAnswer: ImageLoader.answeredButUnusable(failure.error))
        }
        failures[AssetKey.WithHash(key)] = Kept(cause: cause, attempts: failure.attempts, retryAt: failure.retryAt)
        if isEarliestKnown { earliest = earliest.map { min($0, failure.retryAt) } ?? failure.retryAt }
    }

    mutating func forget(_ key: AssetKey) {
        guard !failures.isEmpty, let removed = failures.removeValue(forKey: AssetKey.WithHash(key)) else { return }
        version &+= 1
        if case .text(let parts, _) = removed.cause { texts.release(parts) }
        if isEarliestKnown, removed.retryAt == earliest { isEarliestKnown = false }
    }

    mutating func removeAll() {
        version &+= 1
        failures.removeAll()
        texts.removeAll()
        earliest = nil
        isEarliestKnown = true
    }

    /// Forgets the failures `shouldForget` picks; keeps the others, with their retry times.
    mutating func removeAll(where shouldForget: (Failure) -> Bool) {
        let before = failures.count
        failures = failures.filter { key, kept in
            guard shouldForget(failure(kept, of: key.key)) else { return true }
            if case .text(let parts, _) = kept.cause { texts.release(parts) }
            return false
        }
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

    /// The failure `kept` holds, as an error: a text is made into one (`ImageLoader.FailureText`) now.
    private func failure(_ kept: Kept, of key: AssetKey) -> Failure {
        let error: any Error
        switch kept.cause {
        case .error(let kept): error = kept
        case .text(let parts, let wasUnusableAnswer):
            let (before, after) = texts.strings(parts)
            error = ImageLoader.FailureText(before: before, key: after == nil ? nil : key, after: after ?? "", wasUnusableAnswer: wasUnusableAnswer)
        }
        return Failure(error: error, attempts: kept.attempts, retryAt: kept.retryAt)
    }
}
