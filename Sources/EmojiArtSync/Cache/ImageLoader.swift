import CurlHTTP
import FoundationEssentials
import EmojiArtPNG

/// The memory layer: a byte-bounded LRU of assets (what the agent knows of each, not its bytes: see
/// `Asset.withoutBytes`), the loads in flight (one per key, which later accesses join), and a memory of recent
/// failures with a time after which they are retried (the book's `ImageLoader`, which kept `.failed` forever).
///
/// Its state is mutable, shared by every concurrent access, and correctness depends on coordinating it (two
/// requests for one key must end in one download), so it needs an owner: the `SyncActor` silo, as the book does
/// with `@ImageDatabase class DiskStorage`. It does not know where assets come from: a load is run by the task that
/// began it (`beginLoad`, then `endLoad`; or `asset(for:load:)` with the closure that reads disk or network), never
/// by a task of its own, and an access that finds the key in flight either waits for it (`join`) or, inside the pass
/// that began it, is attached to it (`attachListing`) and answered when it ends, with no task at all.
///
/// A caller that joins a load counts as a memory hit. When the task running a load is cancelled, the callers
/// still waiting take it over (one of them loads again). A failure is remembered until its retry time
/// (`RetryPolicy`); a request after that starts a fresh attempt, so no caller is handed a stale failure forever.
/// Purging drops cached assets, never failures or loads in flight.
@SyncActor
final class ImageLoader {
    /// Runs in the silo (as its caller does), so starting a load costs no hop off it and back.
    typealias Load = @SyncActor () async throws -> (Asset, Hit)

    /// Thrown instead of loading again while a recent failure for the key is remembered.
    struct RememberedFailure: Error, Sendable, CustomStringConvertible {
        let key: AssetKey
        let underlying: any Error
        let attempts: Int
        let retryIn: Duration
        /// When the retry is due (`retryIn` from when the refusal was made).
        var retryAt: ContinuousClock.Instant? = nil
        var description: String {
            "\(underlying) (failed \(attempts)x; next attempt in \(retryIn.secondsText))"
        }
    }

    /// A load in flight, as its runner holds it: handed to `endLoad`.
    struct LoadToken: Sendable {
        let key: AssetKey
        let id: UInt64
    }

    /// What the end of a load tells its runner: the listings a pass attached to it, to be answered alike.
    struct Ended: Sendable {
        let attachedListings: Int
    }

    /// The load of a key was given up by the task running it (cancelled) while others waited: they try again.
    private struct LoadAbandoned: Error {}

    private struct InFlight {
        let id: UInt64
        /// The pass that began it (`beginLoad(_:pass:)`), whose later listings of the key are attached, not joined.
        let pass: UInt64?
        /// Callers waiting for the end, by waiter number.
        var waiters: [UInt64: CheckedContinuation<Asset, any Error>] = [:]
        /// Listings of the key that its pass attached (`attachListing`).
        var listings = 0
    }

    // SAFETY (`memory` and `memoryHits`, `@exclusivity(unchecked)`): read and changed only in the silo, in place,
    // by `MemoryCache`'s own methods (whose closures, given to its key table, read a copy of its slots, never this
    // object) and by increments: no two accesses can overlap, so the run-time check each listing of a pass made
    // cannot fail.
    @exclusivity(unchecked) private var memory: MemoryCache
    private var inFlight: [AssetKey: InFlight] = [:]
    private var failures = FailureLedger()
    private var nextID: UInt64 = 0
    /// How long failures are remembered.
    nonisolated let retryPolicy: RetryPolicy
    private let now: @Sendable () -> ContinuousClock.Instant

    /// Accesses answered from memory, including those that joined a load in flight.
    @exclusivity(unchecked) private(set) var memoryHits = 0
    /// Accesses that waited for a load in flight (`join`) since start: what a test waits for.
    private(set) var joins = 0

    nonisolated init(
        memoryLimit: Int, retryPolicy: RetryPolicy = RetryPolicy(),
        now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        self.memory = MemoryCache(byteLimit: memoryLimit)
        self.retryPolicy = retryPolicy
        self.now = now
    }

    /// The asset for `key`: from memory, from a load already in flight, or from `load`, run by this task.
    /// The returned `Hit` is `.memory` for the first two and whatever `load` said otherwise.
    func asset(for key: AssetKey, load: Load) async throws -> (Asset, Hit) {
        while true {
            if let asset = memory.get(key) {
                memoryHits += 1
                return (asset, .memory)
            }
            if inFlight[key] != nil {
                do {
                    return (try await join(key), .memory)
                } catch is LoadAbandoned {
                    continue  // its runner was cancelled: this caller decides again, and may run the load
                }
            }
            if let refusal = rememberedFailure(for: key) { throw refusal }
            return try await run(load, as: beginLoad(key))
        }
    }

    /// Loads `key` through `load` even if memory has it (a repair must hit the source), still de-duplicated
    /// with any load in flight (joining one is a memory hit, as in `asset(for:load:)`).
    func reload(_ key: AssetKey, load: Load) async throws -> (Asset, Hit) {
        while inFlight[key] != nil {
            do {
                return (try await join(key), .memory)
            } catch is LoadAbandoned {
                continue
            }
        }
        memory.remove(key)
        return try await run(load, as: beginLoad(key))
    }

    private func run(_ load: Load, as token: LoadToken) async throws -> (Asset, Hit) {
        let result: Result<(Asset, Hit), any Error>
        do {
            result = .success(try await load())
        } catch {
            result = .failure(error)
        }
        _ = endLoad(token, with: result.map(\.0))
        return try result.get()
    }

    // MARK: - Loads run by their caller

    /// Registers a load of `key`, which the calling task runs and ends with `endLoad`. `pass`: the pass it is part
    /// of, whose later listings of the key are attached to it. The key must not be in flight (`isLoading`).
    func beginLoad(_ key: AssetKey, pass: UInt64? = nil) -> LoadToken {
        nextID += 1
        inFlight[key] = InFlight(id: nextID, pass: pass)
        return LoadToken(key: key, id: nextID)
    }

    /// Attaches a listing of `key` to its load in flight when pass `pass` began it: answered when it ends, as a
    /// memory hit (or its failure), with no task waiting. False when the key is not in flight for that pass.
    func attachListing(_ key: AssetKey, pass: UInt64) -> Bool {
        guard inFlight[key]?.pass == pass else { return false }
        inFlight[key]?.listings += 1
        memoryHits += 1
        return true
    }

    /// Ends the load of `token` with its result: the asset is kept in memory (without bytes) and any failure of
    /// the key forgotten, or the failure is remembered; every caller waiting is resumed. A cancelled load hands the
    /// key to its waiters, who try again.
    func endLoad(_ token: LoadToken, with result: Result<Asset, any Error>) -> Ended {
        let key = token.key
        var ended = InFlight(id: token.id, pass: nil)
        // Reentrancy: a newer load may have replaced this one while it ran (it then keeps its waiters).
        if let running = inFlight[key], running.id == token.id {
            ended = running
            inFlight[key] = nil
        }
        switch result {
        case .success(let asset):
            memory.insert(asset.withoutBytes)
            failures.forget(key)
            for waiter in ended.waiters.values { waiter.resume(returning: asset) }
        case .failure(let error):
            recordFailure(error, for: key)
            let handedOn: any Error = error is CancellationError ? LoadAbandoned() : error
            for waiter in ended.waiters.values { waiter.resume(throwing: handedOn) }
        }
        return Ended(attachedListings: ended.listings)
    }

    /// Waits for the load of `key` in flight as one of its callers (a memory hit). A waiter whose task is
    /// cancelled stops waiting at once; the load goes on for the others and for its runner.
    private func join(_ key: AssetKey) async throws -> Asset {
        memoryHits += 1
        joins += 1
        nextID += 1
        let waiter = nextID
        guard let loadID = inFlight[key]?.id else { throw LoadAbandoned() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Asset, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    inFlight[key]?.waiters[waiter] = continuation
                }
            }
        } onCancel: {
            Task { @SyncActor in self.waiterCancelled(key: key, loadID: loadID, waiter: waiter) }
        }
    }

    private func waiterCancelled(key: AssetKey, loadID: UInt64, waiter: UInt64) {
        guard inFlight[key]?.id == loadID, let continuation = inFlight[key]?.waiters.removeValue(forKey: waiter) else { return }
        continuation.resume(throwing: CancellationError())
    }

    /// Remembers that an access of `key` failed with `error`, until the time of its retry, as a failed load does
    /// (a cancellation is not a failure). Also for a batch that refuses an access without a load.
    func recordFailure(_ error: any Error, for key: AssetKey) {
        guard !(error is CancellationError) else { return }
        let attempts = (failures.attempts(of: key) ?? 0) + 1
        var delay: Duration
        if let onRecord = error as? UnusableAnswerOnRecord {
            delay = .seconds(max(0, onRecord.retryAt.timeIntervalSinceNow))
        } else if Self.answeredButUnusable(error) {
            delay = retryPolicy.unusableAnswerDelay
        } else {
            delay = retryPolicy.delay(afterAttempt: attempts)
        }
        // The server asked to wait (`Retry-After`): no retry before that, whatever the backoff says.
        if let asked = (error as? HTTPClientError)?.retryAfter, asked > delay { delay = asked }
        failures.record(.init(error: error, attempts: attempts, retryAt: now().advanced(by: delay)), for: key)
    }

    /// A remembered failure as a refusal shows it (`FailureLedger` keeps it as text, `FailureTextTable`): its text,
    /// made only when it is formatted, and whether it was an answer that was no image (what
    /// `forgetTransientFailures` keeps). The error itself was costly to keep: a `SyncError` with the `PNGDefect`
    /// inside it is four allocations and about 400 bytes, and a gallery's 10,000 error items kept 4 MB of them for
    /// as long as the agent ran.
    struct FailureText: Error, Sendable, CustomStringConvertible {
        /// The text before the key's url; all of it when `key` is nil.
        let before: String
        /// The key whose url stood between `before` and `after` (nil: the text did not hold it).
        let key: AssetKey?
        let after: String
        let wasUnusableAnswer: Bool

        init(before: String, key: AssetKey?, after: String, wasUnusableAnswer: Bool) {
            (self.before, self.key, self.after, self.wasUnusableAnswer) = (before, key, after, wasUnusableAnswer)
        }

        var description: String { key.map { before + $0.rawValue + after } ?? before }
    }

    // MARK: - Answers inside a batch (no load, no suspension)

    /// The cached asset for `key`, counted as a memory hit; nil when memory does not hold it.
    func cachedAsset(for key: AssetKey) -> Asset? {
        var hint: Int32 = -1
        return cachedAsset(for: key, hint: &hint)
    }

    /// `cachedAsset(for:)`, looking in the cache's slot `hint` first and leaving there where the key is
    /// (`MemoryCache.get(_:hint:)`).
    func cachedAsset(for key: AssetKey, hint: inout Int32) -> Asset? {
        guard let asset = memory.get(key, hint: &hint) else { return nil }
        memoryHits += 1
        return asset
    }

    /// The size of `key`'s asset if the cache holds it (a memory hit, counted), looked for as
    /// `cachedAsset(for:hint:)` looks, or only in slot `hint` when `onlyAtHint` (complete hints).
    func cachedSize(for key: AssetKey, hint: inout Int32, onlyAtHint: Bool) -> Int? {
        let size = onlyAtHint ? memory.size(of: key, onlyAt: &hint) : memory.size(of: key, hint: &hint)
        if size != nil { memoryHits += 1 }
        return size
    }

    /// Entries in the memory cache, and the inserts it has made (`CacheHints`).
    var cacheCount: Int { memory.count }
    var cacheInserts: UInt64 { memory.inserts }
    var cacheRemovals: UInt64 { memory.removals }
    /// Counts a memory hit answered without asking the cache (`PassAnswers`).
    func countMemoryHit() { memoryHits += 1 }
    /// Makes room in the cache for `count` records in all (`MemoryCache.reserveCapacity`).
    func reserveCache(_ count: Int) { memory.reserveCapacity(count) }

    /// Whether a load of `key` runs now (an access must join it, which means waiting).
    func isLoading(_ key: AssetKey) -> Bool { !inFlight.isEmpty && inFlight[key] != nil }

    /// Whether a failure of `key` is remembered, due for its retry or not.
    func hasFailureOnRecord(_ key: AssetKey) -> Bool { failures.attempts(of: key) != nil }

    /// The refusal an access of `key` gets now: its failure is remembered and its retry time has not come.
    /// Nil when there is none, or when it is due (the next access tries again).
    func rememberedFailure(for key: AssetKey) -> RememberedFailure? {
        guard let failure = failures[key] else { return nil }
        let remaining = now().duration(to: failure.retryAt)
        guard remaining > .zero else { return nil }
        return RememberedFailure(
            key: key, underlying: failure.error, attempts: failure.attempts, retryIn: remaining, retryAt: failure.retryAt)
    }

    /// Whether `retryAt` is still to come: a refusal made before it still holds.
    func isWaiting(until retryAt: ContinuousClock.Instant) -> Bool { now() < retryAt }

    /// Keeps an asset that was answered without a load (a trusted disk hit in a batch), as a finished load would.
    /// Returns the cache slot it is in (-1: not kept), for the caller's hints.
    @discardableResult
    func remember(_ asset: Asset) -> Int32 {
        memory.insert(asset.withoutBytes).slot
    }

    /// Loads in flight that are being waited for (for tests and `status`).
    var loadsInFlight: Int { inFlight.count }

    /// Whether the server answered, but with something that is not an image at all (no PNG signature: the
    /// book's `200` with a JSON error for `N % 10 == 0`; a damaged PNG may be a transfer fault and keeps the
    /// short backoff): asking again in two seconds will get the same answer, so such a failure
    /// waits `RetryPolicy.unusableAnswerDelay` instead of the transient backoff. A changed feed, `SIGHUP` or
    /// the gallery coming back after an outage retries it sooner.
    nonisolated static func answeredButUnusable(_ error: any Error) -> Bool {
        if let kept = error as? FailureText { return kept.wasUnusableAnswer }
        guard let error = error as? SyncError, error.code == .invalidImage else { return false }
        return (error.underlying as? PNGDefect)?.kind == .notPNG
    }

    /// Drops every cached asset (a memory purge). Remembered failures stay: they are the assets' state (`status`
    /// and `emojiart_sync_assets` say failing), not a cache, and forgetting them showed failing assets as missing.
    /// Returns what was dropped.
    @discardableResult
    func purge() -> (entries: Int, bytes: Int) {
        memory.removeAll()
    }

    /// Forgets the remembered failure of `key`, so the next access tries again at once.
    func forgetFailure(_ key: AssetKey) {
        failures.forget(key)
    }

    /// Forgets every remembered failure (the gallery is back, or the user asked for a rescan).
    func forgetFailures() {
        failures.removeAll()
    }

    /// Forgets every remembered failure but answers that were no image at all (`answeredButUnusable`, and those
    /// on record in the index): the next access of a key that failed in transfer asks again now, while the
    /// gallery's error items keep their hour.
    func forgetTransientFailures() {
        failures.removeAll { failure in
            !(failure.error is UnusableAnswerOnRecord || Self.answeredButUnusable(failure.error))
        }
    }

    /// Keys whose remembered failure has reached its retry time.
    func keysDueForRetry() -> [AssetKey] {
        let current = now()
        return failures.dueKeys(at: current)
    }

    var cachedBytes: Int { memory.totalBytes }
    var failingKeys: [AssetKey] { failures.keys.sorted() }
    /// The same keys in no order (no sort for callers that only count).
    var failingKeysUnordered: [AssetKey] { failures.keys }
    /// Changes whenever a failure is recorded or forgotten.
    var failuresVersion: UInt64 { failures.version }
    /// Keys whose last access failed and that wait for their retry.
    var failureCount: Int { failures.count }
    /// When the earliest remembered failure may be retried (nil when none is remembered).
    var nextRetryAt: ContinuousClock.Instant? { failures.earliestRetryAt() }
}
