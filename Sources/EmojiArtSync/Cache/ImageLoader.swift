import CurlHTTP
import FoundationEssentials
import EmojiArtPNG

/// The memory layer: a byte-bounded LRU of assets (what the agent knows of each, not its bytes: see
/// `Asset.withoutBytes`), de-duplication of loads in flight, and a memory of
/// recent failures with a time after which they are retried (the book's `ImageLoader`, which kept
/// `.failed` forever).
///
/// Its state is mutable, shared by every concurrent access, and correctness depends on coordinating it (two
/// requests for one key must end in one download), so it needs an owner: the `SyncActor` silo, as the book does
/// with `@ImageDatabase class DiskStorage`. The book's loader was an actor of its own because SwiftUI views called
/// it; here every caller is already in the silo, and a second actor made a memory hit cross two executors four
/// times. It does not know where assets come from: callers pass the `load` closure that reads disk or network
/// (the `ImageDatabase`).
///
/// A caller that finds the key in flight awaits the same task and counts as a memory hit. A failure is
/// remembered until its retry time (`RetryPolicy`); a request after that starts a fresh attempt, so no
/// caller is handed a stale failure forever. Purging drops cached assets, never failures or in-flight work.
@SyncActor
public final class ImageLoader {
    /// Runs in the silo (as its caller does), so starting a load costs no hop off it and back.
    public typealias Load = @SyncActor @Sendable () async throws -> (Asset, Hit)

    /// Thrown instead of loading again while a recent failure for the key is remembered.
    public struct RememberedFailure: Error, Sendable, CustomStringConvertible {
        public let key: AssetKey
        public let underlying: any Error
        public let attempts: Int
        public let retryIn: Duration
        public var description: String {
            "\(underlying) (failed \(attempts)x; next attempt in \(retryIn.secondsText))"
        }
    }

    private struct InFlight {
        let id: UInt64
        let task: Task<(Asset, Hit), any Error>
        /// Callers awaiting the load and not cancelled; when the last one is cancelled, so is the load.
        var waiters = 1
    }

    private var memory: MemoryCache
    private var inFlight: [AssetKey: InFlight] = [:]
    private var failures = FailureLedger()
    private var nextLoadID: UInt64 = 0
    /// How long failures are remembered.
    public nonisolated let retryPolicy: RetryPolicy
    private let now: @Sendable () -> ContinuousClock.Instant

    /// Accesses answered from memory, including those that joined a load in flight.
    public private(set) var memoryHits = 0

    public nonisolated init(
        memoryLimit: Int, retryPolicy: RetryPolicy = RetryPolicy(),
        now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        self.memory = MemoryCache(byteLimit: memoryLimit)
        self.retryPolicy = retryPolicy
        self.now = now
    }

    /// The asset for `key`: from memory, from a load already in flight, or from `load`.
    /// The returned `Hit` is `.memory` for the first two and whatever `load` said otherwise.
    public func asset(for key: AssetKey, load: @escaping Load) async throws -> (Asset, Hit) {
        if let asset = memory.get(key) {
            memoryHits += 1
            return (asset, .memory)
        }
        if let running = inFlight[key] {
            memoryHits += 1
            inFlight[key]?.waiters += 1
            let (asset, _) = try await result(of: running, for: key).get()
            return (asset, .memory)
        }
        if let refusal = rememberedFailure(for: key) { throw refusal }
        return try await startLoad(for: key, load: load)
    }

    /// Loads `key` through `load` even if memory has it (a repair must hit the source), still de-duplicated
    /// with any load in flight (joining one is a memory hit, as in `asset(for:load:)`).
    public func reload(_ key: AssetKey, load: @escaping Load) async throws -> (Asset, Hit) {
        if let running = inFlight[key] {
            memoryHits += 1
            inFlight[key]?.waiters += 1
            return (try await result(of: running, for: key).get().0, .memory)
        }
        memory.remove(key)
        return try await startLoad(for: key, load: load)
    }

    private func startLoad(for key: AssetKey, load: @escaping Load) async throws -> (Asset, Hit) {
        nextLoadID += 1
        let id = nextLoadID
        let task = Task { try await load() }
        let running = InFlight(id: id, task: task)
        inFlight[key] = running
        let result = await result(of: running, for: key)
        // Reentrancy: a purge or a newer load may have replaced our entry while we awaited.
        if inFlight[key]?.id == id {
            inFlight[key] = nil
        }
        switch result {
        case .success(let loaded):
            memory.insert(loaded.0.withoutBytes)
            failures.forget(key)
            return loaded
        case .failure(let error):
            recordFailure(error, for: key)
            throw error
        }
    }

    /// Remembers that an access of `key` failed with `error`, until the time of its retry, as a failed load does
    /// (a cancellation is not a failure). Also for a batch that refuses an access without a load.
    public func recordFailure(_ error: any Error, for key: AssetKey) {
        guard !(error is CancellationError) else { return }
        let attempts = (failures[key]?.attempts ?? 0) + 1
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

    /// Awaits a load in flight as one of its waiters. A waiter whose task is cancelled stops counting, and when
    /// no waiter is left the load is cancelled (its transfer ends) instead of running on for nobody.
    private func result(of load: InFlight, for key: AssetKey) async -> Result<(Asset, Hit), any Error> {
        await withTaskCancellationHandler {
            await load.task.result
        } onCancel: {
            Task { @SyncActor in self.waiterCancelled(key: key, loadID: load.id) }
        }
    }

    private func waiterCancelled(key: AssetKey, loadID: UInt64) {
        guard var running = inFlight[key], running.id == loadID else { return }
        running.waiters -= 1
        inFlight[key] = running
        if running.waiters <= 0 { running.task.cancel() }
    }

    // MARK: - Answers inside a batch (no load, no suspension)

    /// The cached asset for `key`, counted as a memory hit; nil when memory does not hold it.
    public func cachedAsset(for key: AssetKey) -> Asset? {
        guard let asset = memory.get(key) else { return nil }
        memoryHits += 1
        return asset
    }

    /// Whether a load of `key` runs now (an access must join it, which means waiting).
    public func isLoading(_ key: AssetKey) -> Bool { inFlight[key] != nil }

    /// Whether a failure of `key` is remembered, due for its retry or not.
    public func hasFailureOnRecord(_ key: AssetKey) -> Bool { failures[key] != nil }

    /// The refusal an access of `key` gets now: its failure is remembered and its retry time has not come.
    /// Nil when there is none, or when it is due (the next access tries again).
    public func rememberedFailure(for key: AssetKey) -> RememberedFailure? {
        guard let failure = failures[key] else { return nil }
        let remaining = now().duration(to: failure.retryAt)
        guard remaining > .zero else { return nil }
        return RememberedFailure(key: key, underlying: failure.error, attempts: failure.attempts, retryIn: remaining)
    }

    /// Keeps an asset that was answered without a load (a trusted disk hit in a batch), as a finished load would.
    public func remember(_ asset: Asset) {
        memory.insert(asset.withoutBytes)
    }

    /// Loads in flight that are being waited for (for tests and `status`).
    public var loadsInFlight: Int { inFlight.count }

    /// Whether the server answered, but with something that is not an image at all (no PNG signature: the
    /// book's `200` with a JSON error for `N % 10 == 0`; a damaged PNG may be a transfer fault and keeps the
    /// short backoff): asking again in two seconds will get the same answer, so such a failure
    /// waits `RetryPolicy.unusableAnswerDelay` instead of the transient backoff. A changed feed, `SIGHUP` or
    /// the gallery coming back after an outage retries it sooner.
    nonisolated static func answeredButUnusable(_ error: any Error) -> Bool {
        guard let error = error as? SyncError, error.code == .invalidImage else { return false }
        return (error.underlying as? PNGDefect)?.kind == .notPNG
    }

    /// Drops every cached asset (a memory purge). Remembered failures stay: they are the assets' state (`status`
    /// and `emojiart_sync_assets` say failing), not a cache, and forgetting them showed failing assets as missing.
    /// Returns what was dropped.
    @discardableResult
    public func purge() -> (entries: Int, bytes: Int) {
        memory.removeAll()
    }

    /// Forgets the remembered failure of `key`, so the next access tries again at once.
    public func forgetFailure(_ key: AssetKey) {
        failures.forget(key)
    }

    /// Forgets every remembered failure (the gallery is back, or the user asked for a rescan).
    public func forgetFailures() {
        failures.removeAll()
    }

    /// Keys whose remembered failure has reached its retry time.
    public func keysDueForRetry() -> [AssetKey] {
        let current = now()
        return failures.dueKeys(at: current)
    }

    public var cachedBytes: Int { memory.totalBytes }
    public var failingKeys: [AssetKey] { failures.keys.sorted() }
    /// The same keys in no order (no sort for callers that only count).
    public var failingKeysUnordered: [AssetKey] { failures.keys }
    /// Changes whenever a failure is recorded or forgotten.
    public var failuresVersion: UInt64 { failures.version }
    /// Keys whose last access failed and that wait for their retry.
    public var failureCount: Int { failures.count }
    /// When the earliest remembered failure may be retried (nil when none is remembered).
    public var nextRetryAt: ContinuousClock.Instant? { failures.earliestRetryAt() }
}
