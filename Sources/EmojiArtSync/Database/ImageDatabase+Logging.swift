import FoundationEssentials
import Logging

/// The log lines and counters of accesses, repairs and failures.
extension ImageDatabase {
    /// Counts an access; writes its `hit=` line unless the running pass has written one for `key` already (a
    /// repeat listing of the feed, counted in the pass's summary).
    func logAccess(_ key: AssetKey, hit: Hit, asset: Asset) {
        changes.ring()
        hits[hit, default: 0] += 1
        fetcher.metrics.hit(hit)
        failuresWritten[key] = nil
        guard pass?.noteAccess(key, hit: hit) ?? true else { return }
        logger.info("asset", metadata: [
            "event": "asset", "key": .string(key.rawValue), "hit": .string(hit.rawValue),
            "bytes": .stringConvertible(asset.size), "file": .string(AssetFileName.name(for: key)),
        ])
    }

    /// Counts and logs a repair (`event=repair reason=missing|corrupt`), before its `hit=network` line.
    public func noteRepair(of key: AssetKey, reason: DamageReason) {
        repairs += 1
        pass?.repairs += 1
        changes.ring()
        fetcher.metrics.repair(reason.rawValue)
        logger.info("re-fetching damaged asset", metadata: [
            "event": "repair", "reason": .string(reason.rawValue), "key": .string(key.rawValue),
            "file": .string(AssetFileName.name(for: key)),
        ])
    }

    /// Each access that fails logs a line (`logFailure`), but `emojiart_sync_failures_total` counts loads: the
    /// accesses that join a load in flight share its one failure, and a failure on record did no work.
    func countingFailure(_ load: () async throws -> (Asset, Hit)) async throws -> (Asset, Hit) {
        do {
            return try await load()
        } catch {
            if !(error is CancellationError || error is UnusableAnswerOnRecord) {
                fetcher.metrics.failure(error)
            }
            throw error
        }
    }

    func logFailure(_ key: AssetKey, _ error: any Error) {
        changes.ring()
        let remembered = error is ImageLoader.RememberedFailure || error is UnusableAnswerOnRecord
        if !remembered, !(error is CancellationError) { lastAssetFailure = ("\(key): \(error)", Date()) }
        if pass != nil, pass?.failing.insert(key).inserted == false { return }
        let message = String(describing: error)
        // Written once, at warning: a failure on record, or the same failure again (a conflict a retry after
        // `SIGHUP` finds again, an answer that is still no image an hour later) is counted by the pass and goes
        // to debug, so that a failing item costs one line, not one per poll or retry for as long as it fails.
        let repeated = failuresWritten[key].map { remembered || $0 == message } ?? false
        if repeated {
            pass?.remembered += 1
        } else if !(error is CancellationError) {
            failuresWritten[key] = message
        }
        var metadata: Logger.Metadata = [
            "event": "asset", "key": .string(key.rawValue), "result": "failed", "error": .string(message),
        ]
        if remembered { metadata["remembered"] = "true" }
        logger.log(level: repeated ? .debug : .warning, "asset unavailable", metadata: metadata)
    }

    /// The index could not be read or written where the work could go on without it (a fingerprint not
    /// recorded costs a re-read later): logged, never taken for a different answer.
    func noteIndexTrouble(_ error: SyncError, while doing: String) {
        logger.warning("index error", metadata: [
            "event": "index", "result": "failed", "while": .string(doing), "error": .string(error.message),
        ])
    }
}
