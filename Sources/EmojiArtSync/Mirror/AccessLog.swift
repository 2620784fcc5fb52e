import FoundationEssentials
import Logging

/// The counters and the log lines of asset accesses, repairs, refreshes, conflicts and failures: what a person
/// tailing the log and `status` see of the three cache layers.
///
/// Owns every counter `status` and the metrics show of accesses (hits by layer, repairs, conflicts, refreshes,
/// files read), the running pass's tally (`PassTally`: one `event=asset` line per asset per pass, however often
/// the feed lists it), which failures and conflicts were already written (each is written once, then counted),
/// the last asset failure and the last file moved aside, and the `changes` alarm the status writer sleeps on.
/// Every other type reports to it and reads nothing back but the figures.
@SyncActor
final class AccessLog {
    // SAFETY (each `@exclusivity(unchecked)` property of this class): the class is isolated to the silo, so one
    // thread at a time reaches it, and each of these values is read or changed in place by its own methods, which
    // call nothing that reaches this object (no closure is given to them), so no access to one of them can overlap
    // another and the run-time check Swift would make at each access cannot fail. The access line of every listing
    // made about six such checks: 10 % of a warm pass and of a `SIGHUP` pass (docs/BENCHMARKS.md).
    private let logger: Logger
    /// The `event=asset` lines, encoded straight into bytes (docs/BENCHMARKS.md: about 0.6 µs and no allocation a
    /// line, against 5 µs and six through swift-log); never waits for a stuck log writer.
    @exclusivity(unchecked) private var lines: AccessLineWriter
    /// Inside a batch (`batch(_:)`) the access lines gather and go to the log together at its end, and `changes`
    /// is rung once at its end if an access changed a count.
    @exclusivity(unchecked) private var batching = false
    @exclusivity(unchecked) private var changedInBatch = false
    /// When the running batch began: its access lines are stamped with it (one clock read a batch, not one a line;
    /// a batch is one turn of the silo, well under a millisecond, the lines' resolution).
    @exclusivity(unchecked) private var batchBegan = Date()
    private let metrics: SyncMetrics
    private let received: ReceivedBytes
    private let directory: SyncDirectory

    /// Rung when anything `status` shows changed; the status writer sleeps on it.
    nonisolated let changes = Alarm()

    /// Accesses by the layer that served them: one per `event=asset` access, as `emojiart_sync_hits_total`.
    @exclusivity(unchecked) private(set) var hits = HitCounts()
    private(set) var repairs = 0
    private(set) var conflicts = 0
    /// Files fetched again because the feed's tag for them changed, and how many of those had new bytes.
    private(set) var refreshes = 0
    private(set) var updates = 0
    /// Owned files whose bytes were read to verify them (a fingerprint that matched needs no read).
    private(set) var filesRead = 0
    /// The last file that was not the agent's and was moved aside to let the agent store its asset, for `status`.
    private(set) var lastMovedAside: AgentStatus.MovedAside?
    /// The most recent failure of an asset (not one on record being refused again), for `status`.
    private(set) var lastAssetFailure: (message: String, at: Date)?

    /// Conflicts already logged: each path is reported once, not once per poll.
    private var conflictLedger = ConflictLedger()
    /// The running pass's counts and the keys it has logged. Nil outside a pass (a repair's outcome is always logged).
    @exclusivity(unchecked) private var pass: PassTally?
    /// Keys whose failure has been written since they last succeeded, with the failure written: the same failure on
    /// record (or the same conflict found again) is then counted by each pass, not written again (a failing item
    /// would otherwise cost a line per poll for as long as it fails).
    /// A failure is kept as its text's hash (`String.hashValue`, the process's seed): a gallery with 10,000 error
    /// items keeps 10,000 of these for as long as the agent runs, and the texts were 2.5 MB of them.
    @exclusivity(unchecked) private var failuresWritten: [AssetKey.WithHash: Int] = [:]

    nonisolated init(
        logger: Logger, accessLines: AccessLineWriter, metrics: SyncMetrics, received: ReceivedBytes, directory: SyncDirectory
    ) {
        self.logger = logger
        self.lines = accessLines
        self.metrics = metrics
        self.received = received
        self.directory = directory
    }

    /// Bytes of asset bodies received from the gallery, valid or not, as `emojiart_sync_bytes_fetched_total`.
    nonisolated var bytesFetched: Int { received.count }

    // MARK: - Passes

    /// A pass begins: from now until `endPass()` each asset is logged once (`PassTally`). A pass begun while one
    /// runs is part of it.
    func beginPass() {
        if pass == nil { pass = PassTally(bytesAtStart: bytesFetched) }
    }

    /// Ends the pass and writes its summary line (`event=pass`), with `extra` fields (a `--once` run's totals).
    func endPass(extra: Logger.Metadata = [:]) {
        guard let ended = pass else { return }
        pass = nil
        flushAccessLines()
        logger.info("pass done", metadata: ended.summary(bytesNow: bytesFetched).merging(extra) { _, given in given })
    }

    // MARK: - Accesses

    /// Counts an access; writes its `hit=` line unless the running pass has written one for `key` already (a
    /// repeat listing of the feed, counted in the pass's summary).
    /// `position`: the key's place in the feed, when the caller knows it (a pass counts lines by position).
    func access(_ key: AssetKey, at position: FeedPosition? = nil, hit: Hit, size: Int) {
        if batching { changedInBatch = true } else { changes.ring() }
        hits.add(hit)
        metrics.hit(hit)
        // A key's failure is forgotten when it succeeds; a memory hit follows the access that put the key in
        // memory, which was a success, so only disk and network hits look.
        if hit != .memory, !failuresWritten.isEmpty { failuresWritten[AssetKey.WithHash(key)] = nil }
        guard pass?.noteAccess(key, at: position, hit: hit) ?? true else { return }
        lines.add(key, hit: hit.rawValue, bytes: size, at: batching ? batchBegan : Date())
        if !batching { lines.append() }
    }

    /// Counts a memory hit of the key at `position` that the running pass has written a line for already (a
    /// repeat listing, answered without its key: `PassAnswers`); returns false, counting nothing, when the pass
    /// has not, and the caller answers the access as any other (`access(_:at:hit:size:)`).
    func repeatedMemoryHit(at position: FeedPosition) -> Bool {
        guard pass?.noteRepeat(at: position) == true else { return false }
        if batching { changedInBatch = true } else { changes.ring() }
        hits.add(.memory)
        metrics.hit(.memory)
        return true
    }

    /// A refusal of the key at `position`, which has failed in the running pass already (a repeat listing refused
    /// without its key: `PassAnswers`): counted as `failure(_:_:onRecord:at:)` counts a key's second failure in a
    /// pass, which is not at all. Returns false, doing nothing, when the pass has no failure at `position`: the
    /// caller refuses the access as any other.
    func repeatedRefusal(at position: FeedPosition) -> Bool {
        guard pass?.isRepeatFailure(at: position) == true else { return false }
        if batching { changedInBatch = true } else { changes.ring() }
        return true
    }

    /// Runs `body` (one turn of the silo, which must not suspend) with its access lines gathered and appended to the
    /// log together at its end, in one lock; any other line written meanwhile goes after the ones before it.
    func batch<T, Failure: Error>(_ body: () throws(Failure) -> T) throws(Failure) -> T {
        batching = true
        batchBegan = Date()
        defer {
            batching = false
            lines.append()
            if changedInBatch {
                changedInBatch = false
                changes.ring()
            }
        }
        return try body()
    }

    /// The access lines gathered so far go to the log before another line does, so the log keeps the order.
    private func flushAccessLines() {
        if lines.pendingLines > 0 { lines.append() }
    }

    /// Counts and logs a repair (`event=repair reason=missing|corrupt`), before its `hit=network` line.
    func repair(of key: AssetKey, reason: DamageReason) {
        repairs += 1
        pass?.repairs += 1
        changes.ring()
        metrics.repair(reason.rawValue)
        flushAccessLines()
        logger.info("re-fetching damaged asset", metadata: [
            "event": "repair", "reason": .string(reason.rawValue), "key": .string(key.rawValue),
            "file": .string(key.fileName),
        ])
    }

    /// A load ended in `error`: `emojiart_sync_failures_total` counts loads, not the accesses that shared one,
    /// and a failure on record or a cancellation did no work.
    func loadFailed(_ error: any Error) {
        if !(error is CancellationError || error is UnusableAnswerOnRecord) { metrics.failure(error) }
    }

    /// Logs an access that failed: written once per pass, and once at all while the same failure repeats.
    /// `onRecord`: whether `error` is a failure on record (`ImageLoader.RememberedFailure`, `UnusableAnswerOnRecord`),
    /// when the caller knows it: a reload's pass refuses every listing of every error item, and the casts that
    /// find it out otherwise cost each one.
    /// `position`: the key's place in the feed, when the caller knows it (`repeatedRefusal(at:)` asks by position).
    func failure(_ key: AssetKey, _ error: any Error, onRecord: Bool? = nil, at position: FeedPosition? = nil) {
        if onRecord != true, error is CancellationError {
            // Stopped, not failed: the run or agent that stopped says so once (an interrupted `--once` exits
            // 128 + the signal), rather than a warning for every access it was making.
            flushAccessLines()
            logger.debug("access stopped", metadata: ["event": "asset", "key": .string(key.rawValue), "result": "cancelled"])
            return
        }
        if batching { changedInBatch = true } else { changes.ring() }
        let remembered = onRecord ?? (error is ImageLoader.RememberedFailure || error is UnusableAnswerOnRecord)
        if !remembered { lastAssetFailure = ("\(key): \(error)", Date()) }
        if pass != nil, pass?.noteFailure(key, at: position) == false { return }
        // Written once, at warning: a failure on record, or the same failure again (a conflict a retry after
        // `SIGHUP` finds again, an answer that is still no image an hour later) is counted by the pass and goes
        // to debug, so that a failing item costs one line, not one per poll or retry for as long as it fails.
        // A failure on record already written is not even formatted unless debug lines are wanted: a pass over a
        // gallery with 10,000 error items refuses 10,000 of them.
        let written = failuresWritten[AssetKey.WithHash(key)]
        if written != nil, remembered, logger.logLevel > .debug {
            pass?.remembered += 1
            return
        }
        let message = String(describing: error)
        let repeated = written.map { remembered || $0 == message.hashValue } ?? false
        if repeated {
            pass?.remembered += 1
        } else {
            failuresWritten[AssetKey.WithHash(key)] = message.hashValue
        }
        // Encoded straight into the batch, as the logger would write it (`AccessLineWriter`): in order with the
        // access lines, and never waiting for a stuck log writer.
        let level: Logger.Level = repeated ? .debug : .warning
        guard logger.logLevel <= level else { return }
        lines.addFailure(key, error: message, remembered: remembered, level: level)
        if !batching { lines.append() }
    }

    /// A stored item whose feed tag changed was fetched again: `result` is `not_modified`, `unchanged` or `updated`.
    func refreshed(_ key: AssetKey, result: String, bytes: Int) {
        refreshes += 1
        if result == "updated" { updates += 1 }
        changes.ring()
        flushAccessLines()
        logger.info("refreshed changed item", metadata: [
            "event": "refresh", "key": .string(key.rawValue), "result": .string(result),
            "file": .string(key.fileName), "bytes": .stringConvertible(bytes),
        ])
    }

    /// An owned file was read to verify it.
    func fileRead() {
        filesRead += 1
    }

    /// A file the agent did not write was adopted: it holds exactly the agent's bytes.
    func adopted(_ key: AssetKey) {
        changes.ring()
        flushAccessLines()
        logger.info("adopted identical file", metadata: [
            "event": "adopt", "key": .string(key.rawValue), "file": .string(key.fileName),
        ])
    }

    // MARK: - Conflicts and trouble

    /// A file at `name` that was not the agent's was kept beside it, as `aside`: logged (a warning: a person
    /// finds their file under a new name) and shown by `status`.
    func movedAside(_ key: AssetKey, name: String, to aside: String) {
        conflicts += 1
        lastMovedAside = AgentStatus.MovedAside(file: name, movedTo: aside, at: Date())
        changes.ring()
        flushAccessLines()
        logger.warning("a file the agent did not write was at an asset path; kept under a new name", metadata: [
            "event": "conflict", "key": .string(key.rawValue), "path": .string(directory.path(ofAsset: name)),
            "moved_to": .string(directory.path(ofAsset: aside)),
        ])
    }

    /// The error of an access whose path holds something the agent may not write; the conflict is logged once per
    /// path and occupant.
    func conflict(_ key: AssetKey, path: String, what: String, occupant: PathOccupant) -> SyncError {
        if conflictLedger.note(path: path, occupant: "\(what) \(occupant.identity)") {
            conflicts += 1
            flushAccessLines()
            logger.warning("path taken, left untouched", metadata: [
                "event": "conflict", "key": .string(key.rawValue), "path": .string(path), "reason": .string(what),
            ])
        }
        return SyncError(
            .conflict, "\(path) is \(what); left untouched (move it away to let the agent store \(key))", path: path)
    }

    /// The agent stored a file at `path`: a conflict there, if one was logged, is over.
    func pathStored(_ path: String) {
        conflictLedger.clear(path: path)
        changes.ring()
    }

    /// The index could not be read or written where the work could go on without it (a fingerprint not
    /// recorded costs a re-read later): logged, never taken for a different answer.
    func indexTrouble(_ error: SyncError, while doing: String) {
        flushAccessLines()
        logger.warning("index error", metadata: [
            "event": "index", "result": "failed", "while": .string(doing), "error": .string(error.message),
        ])
    }
}
