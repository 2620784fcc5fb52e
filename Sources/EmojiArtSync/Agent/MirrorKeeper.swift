import CurlHTTP
import FoundationEssentials
import Logging

/// Keeps DIR true to the gallery while the background agent runs: polls the feed, fetches new items,
/// removes the agent's copies of items gone from the feed (behind a mass-deletion guard), checks files the
/// watcher reports and repairs the agent's damaged or missing ones, retries failures when due, and purges.
///
/// Lives in the `SyncActor` silo with the mirror's parts it drives (`MirrorCore`): its state (the feed's
/// validators, pending checks, poll timing) only ever changes together with theirs. Every method may suspend; after each
/// `await` it re-reads what it needs rather than trusting what it saw before.
@SyncActor
public final class MirrorKeeper {
    let core: MirrorCore
    let fetcher: AssetFetcher
    let loader: ImageLoader
    let configuration: AgentConfiguration
    let logger: Logger

    /// Distinct keys of the last feed that was accepted.
    public var feedKeys: [AssetKey] { core.catalogue.keys }
    /// The next poll accesses every feed entry (each access logged), not only what is missing: true for the
    /// first poll and after `SIGHUP`.
    var fullPassRequested = true
    /// A poll was asked for (`SIGHUP`, DIR recreated, the first one): it runs at the next wake-up, and one asked
    /// for while a poll runs makes one more run right after it.
    var pollRequested = true
    var nextPollAt: ContinuousClock.Instant = .now
    /// Rung whenever there is work to do now; the agent's scheduler sleeps on it until the next deadline.
    public nonisolated let alarm = Alarm()
    /// Times the scheduler woke up to run due work (`status --json` shows it: flat while idle).
    public internal(set) var wakeUps = 0
    var runningDueWork = false
    /// The passes of `runDueWork`, for callers that wait for the pass carrying out their request (a reload).
    let passes = PassCounter()
    var feedFailures = 0
    /// What the server said identifies the last feed accepted; the next poll asks "changed since?".
    var feedValidators: HTTPValidators?
    let feedRetry = RetryPolicy(base: .seconds(1), cap: .seconds(30), jitter: 0.2)
    /// Which unchanged polls get a line at info.
    var heartbeat = PollHeartbeat()

    /// A rescan in progress: the file name it goes on after ("" from the start), nil when none is due. The index
    /// is walked a page at a time and only files whose `lstat` differs from their row are checked; a rescan asked
    /// for while one runs starts it over.
    var rescanCursor: String?
    /// Files a person changed (inotify): checked before anything else, with the urgent lane open.
    var urgentChecks: Set<String> = []
    var urgentRepairs = 0
    /// Names seen changed while their key was being repaired: checked again once that repair is done.
    var checksAfterRepair: Set<String> = []
    var checking = false
    var repairing: Set<AssetKey> = []
    var purgeSequence = 0

    /// What `status` shows besides counters.
    public internal(set) var lastPoll: AgentStatus.Poll?
    public internal(set) var lastError: String? {
        didSet { lastErrorAt = Date() }
    }
    /// When `lastError` was set, to show the newer of it and an asset's last failure.
    var lastErrorAt = Date.distantPast
    public internal(set) var lastPurge: AgentStatus.Purge?
    /// The last scrub a command asked for, and how many there were (`scrub` tells its own from an older one).
    public internal(set) var lastScrub: AgentStatus.Scrub?
    var scrubSequence = 0

    /// Re-hashes owned files in the background, a step at a time.
    public let scrubber: Scrubber

    public init(core: MirrorCore, fetcher: AssetFetcher, configuration: AgentConfiguration, logger: Logger) {
        self.scrubber = Scrubber(core: core, interval: configuration.scrubInterval ?? Scrubber.defaultInterval, logger: logger)
        self.core = core
        self.fetcher = fetcher
        self.loader = core.memory
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
        core.log.changes.ring()
        if pollRequested { return .now }  // asked for while this ran: once more, right away
        guard let retryAt = loader.nextRetryAt else { return nextPollAt }
        return min(nextPollAt, retryAt)
    }

    /// Work done outside `runDueWork` (a repair the watcher started) may have changed the next deadline.
    func wakeSchedulerIfAsleep() {
        if !runningDueWork { alarm.ring() }
    }

    /// Polls the feed (`pollFeed()`); after a changed feed, once everything that poll held is freed, gives the
    /// memory back to the kernel (SQLite's page cache, then malloc's free pages).
    func poll() async {
        guard await pollFeed() else { return }
        core.index.releaseMemory()
        await FreedMemory.release()
    }

    /// Fetches the feed and brings DIR in line with it. The first successful poll, and one after `SIGHUP`,
    /// accesses every entry (memory, disk or network, each asset logged once: `PassTally`); others fetch only what
    /// is not on disk.
    ///
    /// The request is conditional (`If-None-Match`/`If-Modified-Since`) when the server gave validators for
    /// the feed last time; a `304` ends the poll there: nothing changed, nothing to walk. A changed feed is
    /// diffed against the index: new keys fetched, gone ones removed, keys whose tag changed refreshed. A feed
    /// that comes back with a new `ETag` and the same items costs its decode and little more: what was worked
    /// out from the feed is kept (`FeedCatalogue.replace`). Returns whether a changed feed was processed.
    func pollFeed() async -> Bool {
        let started = ContinuousClock.now
        let feed: GalleryFeed
        do {
            let conditional = fullPassRequested || feedKeys.isEmpty ? nil : feedValidators
            switch try await fetcher.fetchFeed(validators: conditional, known: feedKeys) {
            case .notModified:
                feedFailures = 0
                scheduleNextPoll()
                fetcher.metrics.poll(.notModified)
                lastPoll = AgentStatus.Poll(at: Date(), result: "ok", detail: "not modified")
                // Routine (1,440 a day at the default interval): debug, but once an hour at info (a heartbeat).
                let level = heartbeat.level()
                logger.log(level: level, "feed poll", metadata: [
                    "event": "poll", "result": "not_modified", "unchanged": .stringConvertible(heartbeat.unchangedPolls),
                    "ms": .stringConvertible((ContinuousClock.now - started).milliseconds),
                ])
                if level == .info { heartbeat.reset() }
                return false
            case .changed(let changed, let validators):
                feed = changed
                feedValidators = validators.isEmpty ? nil : validators
            }
        } catch {
            feedFailures += 1
            var delay = feedRetry.delay(afterAttempt: feedFailures)
            // The gallery asked to wait (`Retry-After`): the next poll comes after that, not at the backoff.
            if let asked = (error as? HTTPClientError)?.retryAfter, asked > delay { delay = asked }
            nextPollAt = ContinuousClock.now.advanced(by: delay)
            fetcher.metrics.poll(.failed)
            lastPoll = AgentStatus.Poll(at: Date(), result: "failed", detail: String(describing: error))
            lastError = String(describing: error)
            logger.warning("feed poll failed", metadata: [
                "event": "poll", "result": "failed", "error": .string(String(describing: error)),
                "attempt": .stringConvertible(feedFailures), "retry_in": .string(delay.secondsText),
            ])
            return false
        }
        // Everything the changed feed leads to is one pass: one line per asset, one `event=pass` line at the end.
        core.log.beginPass()
        defer { core.log.endPass() }
        if feedFailures > 0 {
            // The gallery is back: whatever failed while it was away is worth trying now, not at its backoff.
            // (Answers on record that were not images stay: the outage did not change them.)
            loader.forgetFailures()
        }
        feedFailures = 0
        for rejection in feed.rejections {
            logger.warning("feed item refused", metadata: [
                "event": "reject", "url": .string(rejection.url), "reason": .string(rejection.reason),
            ])
        }
        if Task.isCancelled { return true }  // the agent is stopping: the next start polls again
        let removal: (removed: Int, refused: Bool, detail: String?)
        let itemsChanged: Bool
        do {
            let applied = try await FeedApplication(
                core: core, window: configuration.accessWindow, maxDeletePercent: configuration.maxDeletePercent,
                logger: logger
            ) { [self] jobs in
                switch jobs {
                case .refresh(let keys): await refresh(keys)
                // Whatever is still not on disk (new items, or repairs that failed) is fetched now; keys whose last
                // attempt failed wait for their retry time (`retryDueFailures`), not for every poll.
                case .fetch(let keys): await refetch(keys, reason: nil)
                }
            }.apply(feed, fullPass: fullPassRequested, comparingOffSilo: true)
            if fullPassRequested, !Task.isCancelled { fullPassRequested = false }
            wakeSchedulerIfAsleep()  // failures may now wait for a retry: the scheduler recomputes its deadline
            itemsChanged = applied.itemsChanged
            removal = noteRemoval(applied.removal)
        } catch {
            // The index cannot be read now: this poll stops here, and the next one (or a retry) does it again.
            report(error, while: "bringing DIR in line with the feed")
            nextPollAt = ContinuousClock.now.advanced(by: feedRetry.delay(afterAttempt: 1))
            return true
        }
        if Task.isCancelled { return true }
        // The rescan is the safety net for what the watcher could not see; a feed that came back with a new
        // `ETag` and the same items is a `304` in all but name, and skips it as a `304` does (a rescan costs an
        // `lstat` per file: about 230 ms of CPU at 100,000). SIGHUP, an inotify overflow and the fallback timer
        // rescan whatever the feed did.
        if itemsChanged { rescanAll() }
        await checkPending()
        if Task.isCancelled { return true }
        scheduleNextPoll()
        fetcher.metrics.poll(removal.refused ? .refused : .ok)
        lastPoll = AgentStatus.Poll(at: Date(), result: removal.refused ? "refused" : "ok", detail: removal.detail)
        logger.info("feed poll", metadata: [
            "event": "poll", "result": .string(removal.refused ? "refused" : "ok"),
            "entries": .stringConvertible(feed.entries.count), "unique": .stringConvertible(feed.uniqueKeys.count),
            "removed": .stringConvertible(removal.removed), "ms": .stringConvertible((ContinuousClock.now - started).milliseconds),
        ])
        try? await core.owned.makeDurable()
        return true
    }

    func scheduleNextPoll() {
        let interval = configuration.pollInterval.seconds * Double.random(in: 0.9...1.1)
        nextPollAt = ContinuousClock.now.advanced(by: .milliseconds(Int64(interval * 1000)))
    }

    /// Fetches again, conditionally, the stored keys whose feed tag changed (bounded window, as accesses).
    func refresh(_ keys: [AssetKey]) async {
        let keys = keys.filter { !repairing.contains($0) }
        guard !keys.isEmpty else { return }
        repairing.formUnion(keys)
        let pipeline = core.pipeline
        await forEachBounded(keys, limit: configuration.accessWindow) { key in
            try? await pipeline.refresh(key)
        }
        repairing.subtract(keys)
        wakeSchedulerIfAsleep()
    }

    /// What the removal of items gone from the feed did, for the poll's status and line.
    private func noteRemoval(_ outcome: GoneItemRemoval.Outcome) -> (removed: Int, refused: Bool, detail: String?) {
        if let failure = outcome.lastError { lastError = failure }
        if let refusal = outcome.refusal {
            lastError = refusal
            return (0, true, refusal)
        }
        return (outcome.removed, false, outcome.removed > 0 ? "removed \(outcome.removed) gone from the feed" : nil)
    }
}
