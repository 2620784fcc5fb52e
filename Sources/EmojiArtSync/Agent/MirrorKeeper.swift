import Foundation
import Logging

/// Keeps DIR true to the gallery while the background agent runs: polls the feed, fetches new items,
/// removes the agent's copies of items gone from the feed (behind a mass-deletion guard), checks files the
/// watcher reports and repairs the agent's damaged or missing ones, retries failures when due, and purges.
///
/// Lives in the `SyncActor` silo with the `ImageDatabase` it drives: its state (the current feed, pending
/// checks, poll timing) only ever changes together with the database's. Every method may suspend; after each
/// `await` it re-reads what it needs rather than trusting what it saw before.
@SyncActor
public final class MirrorKeeper {
    private let database: ImageDatabase
    private let fetcher: AssetFetcher
    private let loader: ImageLoader
    private let configuration: AgentConfiguration
    private let logger: Logger

    /// Distinct keys of the last feed that was accepted.
    public private(set) var feedKeys: [AssetKey] = []
    /// The next poll accesses every feed entry (each access logged), not only what is missing: true for the
    /// first poll and after `SIGHUP`.
    private var fullPassRequested = true
    /// A poll was asked for (`SIGHUP`, DIR recreated, the first one): it runs at the next wake-up, and one asked
    /// for while a poll runs makes one more run right after it.
    private var pollRequested = true
    private var nextPollAt: ContinuousClock.Instant = .now
    /// Rung whenever there is work to do now; the agent's scheduler sleeps on it until the next deadline.
    public nonisolated let alarm = Alarm()
    /// Times the scheduler woke up to run due work (`status --json` shows it: flat while idle).
    public private(set) var wakeUps = 0
    private var runningDueWork = false
    /// The passes of `runDueWork`, for callers that wait for the pass carrying out their request (a reload).
    private let passes = PassCounter()
    private var feedFailures = 0
    /// What the server said identifies the last feed accepted; the next poll asks "changed since?".
    private var feedValidators: HTTPValidators?
    private let feedRetry = RetryPolicy(base: .seconds(1), cap: .seconds(30), jitter: 0.2)

    private var pendingChecks: Set<String> = []
    /// Names seen changed while their key was being repaired: checked again once that repair is done.
    private var checksAfterRepair: Set<String> = []
    private var checking = false
    private var repairing: Set<AssetKey> = []
    private var purgeSequence = 0

    /// What `status` shows besides counters.
    public private(set) var lastPoll: AgentStatus.Poll?
    public private(set) var lastError: String?
    public private(set) var lastPurge: AgentStatus.Purge?

    /// Re-hashes owned files in the background, a step at a time.
    public let scrubber: Scrubber

    public init(database: ImageDatabase, fetcher: AssetFetcher, loader: ImageLoader, configuration: AgentConfiguration, logger: Logger) {
        self.scrubber = Scrubber(database: database, interval: configuration.scrubInterval ?? Scrubber.defaultInterval, logger: logger)
        self.database = database
        self.fetcher = fetcher
        self.loader = loader
        self.configuration = configuration
        self.logger = logger
    }

    // MARK: - Feed

    /// Asks for a poll now; with `fullPass`, that poll accesses every entry (`SIGHUP`). Asked while a poll
    /// runs, one more poll runs right after it (requests coalesce, none is lost).
    public func pollNow(fullPass: Bool = false) {
        pollRequested = true
        if fullPass { fullPassRequested = true }
        alarm.ring()
    }

    /// Runs whatever is due now: a poll (requested or its time come), retries whose backoff expired, queued
    /// checks. Returns when the next of them falls due (nil: nothing is scheduled, only events can wake).
    public func runDueWork() async -> ContinuousClock.Instant? {
        wakeUps += 1
        runningDueWork = true
        passes.begin()
        defer {
            runningDueWork = false
            passes.end()
        }
        if pollRequested || ContinuousClock.now >= nextPollAt {
            pollRequested = false
            await poll()
        }
        await retryDueFailures()
        if hasPendingChecks { await checkPending() }
        database.changes.ring()
        if pollRequested { return .now }  // asked for while this ran: once more, right away
        guard let retryAt = await loader.nextRetryAt else { return nextPollAt }
        return min(nextPollAt, retryAt)
    }

    /// Work done outside `runDueWork` (a repair the watcher started) may have changed the next deadline.
    private func wakeSchedulerIfAsleep() {
        if !runningDueWork { alarm.ring() }
    }

    /// Fetches the feed and brings DIR in line with it. The first successful poll, and one after `SIGHUP`,
    /// accesses every entry (memory, disk or network, each logged); others fetch only what is not on disk.
    ///
    /// The request is conditional (`If-None-Match`/`If-Modified-Since`) when the server gave validators for
    /// the feed last time; a `304` ends the poll there: nothing changed, nothing to walk. A changed feed is
    /// diffed against the index: new keys fetched, gone ones removed, keys whose tag changed refreshed.
    private func poll() async {
        let started = ContinuousClock.now
        let feed: GalleryFeed
        do {
            let conditional = fullPassRequested || feedKeys.isEmpty ? nil : feedValidators
            switch try await fetcher.fetchFeed(validators: conditional, known: feedKeys) {
            case .notModified:
                feedFailures = 0
                scheduleNextPoll()
                lastPoll = AgentStatus.Poll(at: Date(), result: "ok", detail: "not modified")
                logger.info("feed poll", metadata: [
                    "event": "poll", "result": "not_modified",
                    "ms": .stringConvertible((ContinuousClock.now - started).milliseconds),
                ])
                return
            case .changed(let changed, let validators):
                feed = changed
                feedValidators = validators.isEmpty ? nil : validators
            }
        } catch {
            feedFailures += 1
            let delay = feedRetry.delay(afterAttempt: feedFailures)
            nextPollAt = ContinuousClock.now.advanced(by: delay)
            lastPoll = AgentStatus.Poll(at: Date(), result: "failed", detail: String(describing: error))
            lastError = String(describing: error)
            logger.warning("feed poll failed", metadata: [
                "event": "poll", "result": "failed", "error": .string(String(describing: error)),
                "attempt": .stringConvertible(feedFailures), "retry_in": .string(delay.secondsText),
            ])
            return
        }
        if feedFailures > 0 {
            // The gallery is back: whatever failed while it was away is worth trying now, not at its backoff.
            // (Answers on record that were not images stay: the outage did not change them.)
            await loader.forgetFailures()
        }
        feedFailures = 0
        for rejection in feed.rejections {
            logger.warning("feed item refused", metadata: [
                "event": "reject", "url": .string(rejection.url), "reason": .string(rejection.reason),
            ])
        }
        if Task.isCancelled { return }  // the agent is stopping: the next start polls again
        let removal = await removeItemsGoneFromFeed(feed)
        feedKeys = feed.uniqueKeys
        database.setFeed(feedKeys, tags: feed.tags)
        if fullPassRequested {
            fullPassRequested = false
            await access(feed.entries)
        }
        if Task.isCancelled { return }
        await refresh(database.staleKeys())
        // Whatever is still not on disk (new items, or repairs that failed) is fetched now, and every owned file
        // is checked (an lstat each, a hash only if it changed): the poll is the safety net for anything the
        // watcher could not see or a repair could not finish.
        if Task.isCancelled { return }
        // Keys whose last attempt failed wait for their retry time (`retryDueFailures`), not for every poll.
        let waiting = Set(await loader.failingKeys)
        await refetch(database.unstoredKeys(among: feed.uniqueKeys).filter { !waiting.contains($0) }, reason: nil)
        rescanAll()
        await checkPending()
        if Task.isCancelled { return }
        scheduleNextPoll()
        lastPoll = AgentStatus.Poll(at: Date(), result: removal.refused ? "refused" : "ok", detail: removal.detail)
        logger.info("feed poll", metadata: [
            "event": "poll", "result": .string(removal.refused ? "refused" : "ok"),
            "entries": .stringConvertible(feed.entries.count), "unique": .stringConvertible(feed.uniqueKeys.count),
            "removed": .stringConvertible(removal.removed), "ms": .stringConvertible((ContinuousClock.now - started).milliseconds),
        ])
        try? await database.makeDurable()
        await FreedMemory.release()  // a changed feed's pass freed far more than it keeps (a 304 ended above)
    }

    private func scheduleNextPoll() {
        let interval = configuration.pollInterval.seconds * Double.random(in: 0.9...1.1)
        nextPollAt = ContinuousClock.now.advanced(by: .milliseconds(Int64(interval * 1000)))
    }

    /// Fetches again, conditionally, the stored keys whose feed tag changed (bounded window, as accesses).
    private func refresh(_ keys: [AssetKey]) async {
        let keys = keys.filter { !repairing.contains($0) }
        guard !keys.isEmpty else { return }
        repairing.formUnion(keys)
        await forEachBounded(keys, limit: configuration.accessWindow) { [database] key in
            try? await database.refresh(key)
        }
        repairing.subtract(keys)
        wakeSchedulerIfAsleep()
    }

    private func removeItemsGoneFromFeed(_ feed: GalleryFeed) async -> (removed: Int, refused: Bool, detail: String?) {
        let keep = Set(feed.uniqueKeys)
        let owned = database.ownedKeys
        let gone = owned.filter { !keep.contains($0) }
        guard !gone.isEmpty else { return (0, false, nil) }
        let percent = owned.isEmpty ? 0 : gone.count * 100 / owned.count
        if feed.uniqueKeys.isEmpty || percent > configuration.maxDeletePercent {
            let why = feed.uniqueKeys.isEmpty ? "the feed is empty" : "\(percent)% > --max-delete \(configuration.maxDeletePercent)%"
            let detail = "refusing to delete \(gone.count) of \(owned.count) files (\(why)); nothing deleted. If the gallery really dropped them, restart with --max-delete 100"
            lastError = detail
            logger.warning("mass deletion refused", metadata: [
                "event": "delete_guard", "would_delete": .stringConvertible(gone.count), "owned": .stringConvertible(owned.count),
                "reason": .string(why), "hint": "restart with --max-delete 100 to allow",
            ])
            return (0, true, detail)
        }
        var removed = 0
        for key in gone {
            do {
                let bytes = try await database.removeOwnedFile(for: key)
                removed += 1
                logger.info("removed asset gone from feed", metadata: [
                    "event": "remove", "key": .string(key.rawValue), "bytes": .stringConvertible(bytes),
                ])
            } catch {
                lastError = String(describing: error)
                logger.warning("cannot remove asset", metadata: ["event": "remove", "key": .string(key.rawValue), "error": .string(String(describing: error))])
            }
        }
        return (removed, false, removed > 0 ? "removed \(removed) gone from the feed" : nil)
    }

    // MARK: - Accessing and repairing

    /// Accesses feed entries like `--once` does (duplicates included, within the bounded window).
    private func access(_ entries: [AssetKey]) async {
        await forEachBounded(entries, limit: configuration.accessWindow) { [database] key in
            _ = try? await database.image(key)
        }
        wakeSchedulerIfAsleep()  // failures may now wait for a retry: the scheduler recomputes its deadline
    }

    /// Fetches keys from the network and stores them; with a reason, each is logged as a repair first.
    private func refetch(_ keys: [AssetKey], reason: ImageDatabase.DamageReason?) async {
        let keys = keys.filter { !repairing.contains($0) }
        guard !keys.isEmpty else { return }
        repairing.formUnion(keys)
        await forEachBounded(keys, limit: configuration.accessWindow) { [database] key in
            if let reason { await database.noteRepair(of: key, reason: reason) }
            _ = try? await database.refetch(key)
        }
        repairing.subtract(keys)
        wakeSchedulerIfAsleep()  // failures may now wait for a retry: the scheduler recomputes its deadline
        // Files that changed again while their repair ran (deleted once more, say) are checked now.
        let names = Set(keys.map(AssetFileName.name(for:)))
        let recheck = checksAfterRepair.intersection(names)
        if !recheck.isEmpty {
            checksAfterRepair.subtract(recheck)
            pendingChecks.formUnion(recheck)
            alarm.ring()  // even from inside runDueWork: these checks are due now
        }
    }

    /// Queues files for a check (names from inotify events); `checkPending()` processes them.
    public func noteChanged(fileNames: some Sequence<String>) {
        pendingChecks.formUnion(fileNames)
    }

    /// Queues every owned file for a check (inotify overflow, `SIGHUP`, the fallback timer, DIR recreated).
    public func rescanAll() {
        pendingChecks.formUnion(database.ownedFileNames)
    }

    public var hasPendingChecks: Bool { !pendingChecks.isEmpty }

    /// Checks queued files and repairs the agent's damaged ones. Re-entrant calls return at once: the running
    /// pass loops until the queue is empty, so a burst of events costs a few passes, not one per event.
    public func checkPending() async {
        guard !checking else { return }
        checking = true
        defer { checking = false }
        while !pendingChecks.isEmpty {
            let names = pendingChecks
            pendingChecks.removeAll()
            var missing: [AssetKey] = []
            var corrupt: [AssetKey] = []
            for name in names.sorted() {
                if Task.isCancelled { return }  // stopping: the next start checks everything anyway
                guard let key = database.ownedKey(forFileNamed: name) else { continue }
                if repairing.contains(key) {
                    checksAfterRepair.insert(name)
                    continue
                }
                switch await database.check(fileNamed: name) {
                case .damaged(.missing): missing.append(key)
                case .damaged(.corrupt): corrupt.append(key)
                case .intact, .notOwned: break
                }
            }
            async let missingDone: Void = refetch(missing, reason: .missing)
            async let corruptDone: Void = refetch(corrupt, reason: .corrupt)
            _ = await (missingDone, corruptDone)
        }
    }

    /// Retries accesses whose remembered failure has reached its retry time: keys never stored are fetched,
    /// and stored ones are checked, so a repair that failed (file still missing or corrupt) is tried again.
    /// A failed retry keeps its record, so the backoff keeps growing up to its cap.
    public func retryDueFailures() async {
        let due = await loader.keysDueForRetry()
        guard !due.isEmpty else { return }
        let current = Set(feedKeys)
        var unstored: [AssetKey] = []
        var missing: [AssetKey] = []
        var corrupt: [AssetKey] = []
        for key in due {
            guard current.contains(key), !repairing.contains(key) else {
                if !current.contains(key) { await loader.forgetFailure(key) }
                continue
            }
            guard database.isStored(key) else {
                unstored.append(key)
                continue
            }
            switch await database.check(fileNamed: AssetFileName.name(for: key)) {
            case .intact: await loader.forgetFailure(key)
            case .damaged(.missing): missing.append(key)
            case .damaged(.corrupt): corrupt.append(key)
            case .notOwned: unstored.append(key)
            }
        }
        async let fetched: Void = refetch(unstored, reason: nil)
        async let restored: Void = refetch(missing, reason: .missing)
        async let replaced: Void = refetch(corrupt, reason: .corrupt)
        _ = await (fetched, restored, replaced)
    }

    /// Forgets every remembered failure, so the next attempts happen now (`SIGHUP`: "try again now").
    public func forgetFailures() async {
        await database.forgetFailures()
    }

    /// What `SIGHUP` asks for: every failure retried now, a full pass over the feed, every owned file checked.
    /// Returns the number of the scheduler pass that carries it out, for `waitForPass(_:)`.
    public func reload() async -> Int {
        await forgetFailures()
        pollNow(fullPass: true)
        rescanAll()
        return passes.nextPass
    }

    /// Returns once scheduler pass `pass` (from `reload()`) has ended, or when the calling task is cancelled.
    public func waitForPass(_ pass: Int) async {
        await passes.waitUntilEnded(pass)
    }

    /// One scrub step; what it finds damaged is repaired now (`event=repair reason=corrupt|missing`).
    public func scrubStep() async {
        let found = await scrubber.step()
        let corrupt = found.damaged.filter { $0.reason == .corrupt }.map(\.key)
        let missing = found.damaged.filter { $0.reason == .missing }.map(\.key)
        await refetch(corrupt, reason: .corrupt)
        await refetch(missing, reason: .missing)
    }

    // MARK: - Purging

    /// `SIGUSR1`: drops the memory cache (the next accesses are disk hits).
    public func purgeMemory() async -> AgentStatus.Purge {
        let dropped = await loader.purge()
        await FreedMemory.release()  // what the cache held goes back to the kernel, not to malloc's free lists
        return recordPurge(scope: "memory", entries: dropped.entries, bytes: dropped.bytes)
    }

    /// `SIGUSR2`: removes the agent's own files, empties the index and the memory cache, then fetches the
    /// whole feed again (network hits). Files the agent did not write stay.
    public func purgeDisk() async -> AgentStatus.Purge {
        var removed = (files: 0, bytes: 0)
        do {
            removed = try await database.clear()
        } catch {
            lastError = String(describing: error)
            logger.error("disk purge incomplete", metadata: ["event": "purge", "scope": "disk", "error": .string(String(describing: error))])
        }
        _ = await loader.purge()
        let record = recordPurge(scope: "disk", entries: removed.files, bytes: removed.bytes)
        await refetch(feedKeys, reason: nil)
        return record
    }

    private func recordPurge(scope: String, entries: Int, bytes: Int) -> AgentStatus.Purge {
        purgeSequence += 1
        let record = AgentStatus.Purge(sequence: purgeSequence, scope: scope, entries: entries, bytes: bytes, at: Date())
        lastPurge = record
        database.changes.ring()  // `purge` waits for the status file to show it
        logger.notice("purged", metadata: [
            "event": "purge", "scope": .string(scope), "entries": .stringConvertible(entries), "bytes": .stringConvertible(bytes),
        ])
        return record
    }

    // MARK: - Status

    /// A snapshot for `status.json`. Costs the same at any gallery size: every figure is a counter kept as
    /// events happen.
    public func status(base: AgentStatus) async -> AgentStatus {
        var status = base
        status.assets.total = feedKeys.count
        status.assets.ok = database.storedInFeed
        status.assets.missing = status.assets.total - status.assets.ok
        status.assets.failing = await loader.failureCount
        status.wakeUps = wakeUps
        status.indexFiles = database.ownedCount
        status.hits.memory = database.hits[.memory, default: 0]
        status.hits.disk = database.hits[.disk, default: 0]
        status.hits.network = database.hits[.network, default: 0]
        status.repairs = database.repairs
        status.bytesFetched = database.bytesFetched
        status.memoryBytes = await loader.cachedBytes
        status.lastPoll = lastPoll
        status.lastError = lastError
        status.lastPurge = lastPurge
        status.nextPoll = Date().addingTimeInterval((nextPollAt - ContinuousClock.now).seconds)
        return status
    }
}
