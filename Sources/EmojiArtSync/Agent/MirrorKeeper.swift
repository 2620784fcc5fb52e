import CurlHTTP
import FoundationEssentials
import Logging

/// Keeps DIR true to the gallery while the background agent runs: polls the feed and applies it (new items
/// fetched, the agent's copies of items gone from the feed removed behind a mass-deletion guard), runs what falls
/// due (polls, retries, queued checks) for the agent's scheduler, purges on request and makes the status snapshot.
/// Checking and repairing files is its `RepairQueue`'s: the keeper asks it.
///
/// Owns the poll's state (the feed's validators, timing, failures, heartbeat, requests), the scheduler's alarm and
/// passes, and what `status` shows besides counters (last poll, purge and scrub). Lives in the `SyncActor` silo
/// with the mirror's parts it drives (`MirrorCore`): its state only ever changes together with theirs. Every method
/// may suspend; after each `await` it re-reads what it needs rather than trusting what it saw before.
@SyncActor
final class MirrorKeeper {
    private let core: MirrorCore
    private let fetcher: AssetFetcher
    private let loader: ImageLoader
    private let configuration: AgentConfiguration
    private let logger: Logger

    /// Distinct keys of the last feed that was accepted.
    var feedKeys: [AssetKey] { core.catalogue.keys }
    /// Full passes asked for (the first poll, then one per `SIGHUP`) and the newest of those requests a finished
    /// full pass carried out. A poll accesses every feed entry (each access logged), not only what is missing,
    /// while a request is outstanding. Counted, not a flag, so that a `SIGHUP` arriving while a full pass runs is
    /// not cleared when that pass ends: the pass read the feed before the request.
    private var fullPassesAsked = 1
    private var fullPassesCarriedOut = 0
    private var fullPassRequested: Bool { fullPassesAsked > fullPassesCarriedOut }
    /// A poll was asked for (`SIGHUP`, DIR recreated, the first one): it runs at the next wake-up, and one asked
    /// for while a poll runs makes one more run right after it.
    private var pollRequested = true
    private var nextPollAt: ContinuousClock.Instant = .now
    /// Rung whenever there is work to do now; the agent's scheduler sleeps on it until the next deadline.
    nonisolated let alarm = Alarm()
    /// Times the scheduler woke up to run due work (`status --json` shows it: flat while idle).
    private(set) var wakeUps = 0
    /// The passes of `runDueWork`, for callers that wait for the pass carrying out their request (a reload).
    private let passes = PassCounter()
    private var feedFailures = 0
    /// What the server said identifies the last feed accepted; the next poll asks "changed since?".
    private var feedValidators: HTTPValidators?
    /// The last feed decoded, with the SHA-256 of its body: a body that comes back byte-identical (a full pass
    /// asks unconditionally; some galleries cannot answer `304`) is not decoded again (`FeedFetch.sameBody`). Its
    /// items are the catalogue's own (shared storage), so it costs the listing order only: 4 bytes a listing. Its
    /// body, when it went to a file, is kept there (`KeptFeedBody`, no memory) for the next changed body to be
    /// decoded as its difference from it.
    private var lastFeed: (bodyDigest: String, feed: GalleryFeed, body: KeptFeedBody?)?
    private let feedRetry = RetryPolicy(base: .seconds(1), cap: .seconds(30), jitter: 0.2)
    /// Which unchanged polls get a line at info.
    private var heartbeat = PollHeartbeat()

    /// Checks and repairs files: what the watcher, rescans, retries, scrubs and purges ask for.
    nonisolated let repairs: RepairQueue
    /// The last error that ended a piece of work (shown by `status`).
    private let errors: WorkErrors

    /// What `status` shows besides counters.
    private(set) var lastPoll: AgentStatus.Poll?
    var lastError: String? { errors.last }
    private(set) var lastPurge: AgentStatus.Purge?
    private var purgeSequence = 0
    /// The last scrub a command asked for, and how many there were (`scrub` tells its own from an older one).
    private(set) var lastScrub: AgentStatus.Scrub?
    private var scrubSequence = 0

    /// Re-hashes owned files in the background, a step at a time.
    let scrubber: Scrubber

    init(core: MirrorCore, fetcher: AssetFetcher, configuration: AgentConfiguration, logger: Logger) {
        self.scrubber = Scrubber(core: core, interval: configuration.schedule.scrubInterval ?? Scrubber.defaultInterval, logger: logger)
        self.core = core
        self.fetcher = fetcher
        self.loader = core.memory
        self.configuration = configuration
        self.logger = logger
        let errors = WorkErrors(logger: logger)
        self.errors = errors
        self.repairs = RepairQueue(
            core: core, window: configuration.accessWindow, errors: errors, alarm: alarm, passes: passes)
    }

    // MARK: - Feed

    /// Asks for a poll now; with `fullPass`, that poll accesses every entry (`SIGHUP`). Asked while a poll
    /// runs, one more poll runs right after it (requests coalesce, none is lost).
    func pollNow(fullPass: Bool = false) {
        pollRequested = true
        if fullPass { fullPassesAsked += 1 }
        alarm.ring()
    }

    /// Runs whatever is due now: a poll (requested or its time come), retries whose backoff expired, queued
    /// checks. Returns when the next of them falls due (nil: nothing is scheduled, only events can wake).
    func runDueWork() async -> ContinuousClock.Instant? {
        wakeUps += 1
        passes.begin()
        defer { passes.end() }
        if pollRequested || ContinuousClock.now >= nextPollAt {
            pollRequested = false
            await poll()
        }
        await repairs.retryDueFailures()
        if repairs.hasPendingChecks { await repairs.checkPending() }
        core.log.changes.ring()
        if pollRequested { return .now }  // asked for while this ran: once more, right away
        guard let retryAt = loader.nextRetryAt else { return nextPollAt }
        return min(nextPollAt, retryAt)
    }

    /// Polls the feed (`pollFeed()`); after a changed feed, once everything that poll held is freed, gives the
    /// memory back to the kernel (SQLite's page cache, then malloc's free pages).
    private func poll() async {
        guard await pollFeed() else { return }
        core.index.releaseMemory()
        await FreedMemory.release()
    }

    /// Fetches the feed and brings DIR in line with it. The first successful poll, and one after `SIGHUP`,
    /// accesses every entry (memory, disk or network, each asset logged once: `PassTally`); others fetch only what
    /// is not on disk.
    ///
    /// The request is conditional (`If-None-Match`/`If-Modified-Since`) when the server gave validators for
    /// the feed last time; a `304` ends the poll there (nothing changed, nothing to walk), unless a full pass was
    /// asked for (`SIGHUP`): that pass then runs over the feed kept. A changed feed is
    /// diffed against the index: new keys fetched, gone ones removed, keys whose tag changed refreshed. A feed
    /// that comes back with a new `ETag` and the same items costs its decode and little more: what was worked
    /// out from the feed is kept (`FeedCatalogue.replace`). Returns whether a changed feed was processed.
    private func pollFeed() async -> Bool {
        let started = ContinuousClock.now
        let jobsBefore = SyncActor.jobsEntered  // with the counting executor only (`SiloJobTests`)
        let feed: GalleryFeed
        let bodyDigest: String
        var keptBody = lastFeed?.body
        // What became of the body: decoded, the same bytes as the last one (`unchanged`), or none (`not_modified`).
        var body = "decoded"
        do {
            // A reload (`SIGHUP`) asks conditionally too, when the last feed is kept: a `304` then carries the full
            // pass over that feed, and the gallery sends no 36 MB body (100,000 items) it already said is unchanged.
            let conditional = feedKeys.isEmpty || (fullPassRequested && lastFeed == nil) ? nil : feedValidators
            let fetched = try await fetcher.fetchFeed(
                validators: conditional, known: feedKeys, bodyFolder: core.storage.temporaryFolder,
                unchangedDigest: lastFeed?.bodyDigest, keepingBody: true,
                previous: lastFeed.flatMap { last in last.body.map { FeedDifference.Previous(feed: last.feed, body: $0) } })
            switch fetched {
            case .notModified where fullPassRequested:
                guard let last = lastFeed else { throw SyncError(.feed, "the feed's last body was not kept") }
                (feed, bodyDigest, body) = (last.feed, last.bodyDigest, "not_modified")
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
            case .changed(let changed, let validators, let digest, let kept):
                feed = changed
                bodyDigest = digest
                keptBody = kept
                if kept?.decodedAsDifference == true { body = "difference" }
                feedValidators = validators.isEmpty ? nil : validators
            case .sameBody(let validators):
                guard let last = lastFeed else { throw SyncError(.feed, "the feed's last body was not kept") }
                (feed, bodyDigest, body) = (last.feed, last.bodyDigest, "unchanged")
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
            errors.record(String(describing: error))
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
        let fullPass = fullPassRequested
        let fullPassTicket = fullPassesAsked  // a request made after this line needs a pass of its own
        do {
            let applied = try await FeedApplication(
                core: core, window: configuration.accessWindow, maxDeletePercent: configuration.safety.maxDeletePercent,
                logger: logger
            ) { [repairs] jobs in
                switch jobs {
                case .refresh(let keys): await repairs.refresh(keys)
                // Whatever is still not on disk (new items, or repairs that failed) is fetched now; keys whose last
                // attempt failed wait for their retry time (`retryDueFailures`), not for every poll.
                case .fetch(let keys): await repairs.refetch(keys, reason: nil)
                }
            }.apply(feed, fullPass: fullPass, comparingOffSilo: true)
            if fullPass, !Task.isCancelled { fullPassesCarriedOut = max(fullPassesCarriedOut, fullPassTicket) }
            itemsChanged = applied.itemsChanged
            removal = noteRemoval(applied.removal)
            // Kept with the catalogue's items (the same as the feed's when they matched), not a second copy.
            lastFeed = (
                bodyDigest, GalleryFeed(entryPositions: feed.entryPositions, items: core.catalogue.feed, rejections: feed.rejections),
                keptBody
            )
        } catch {
            // The index cannot be read now: this poll stops here, and the next one (or a retry) does it again.
            errors.report(error, while: "bringing DIR in line with the feed")
            nextPollAt = ContinuousClock.now.advanced(by: feedRetry.delay(afterAttempt: 1))
            return true
        }
        if Task.isCancelled { return true }
        // The rescan is the safety net for what the watcher could not see; a feed that came back with a new
        // `ETag` and the same items is a `304` in all but name, and skips it as a `304` does (a rescan costs an
        // `lstat` per file: about 230 ms of CPU at 100,000). SIGHUP, an inotify overflow and the fallback timer
        // rescan whatever the feed did.
        if itemsChanged { repairs.rescanAll() }
        await repairs.checkPending()
        if Task.isCancelled { return true }
        scheduleNextPoll()
        fetcher.metrics.poll(removal.refused ? .refused : .ok)
        lastPoll = AgentStatus.Poll(at: Date(), result: removal.refused ? "refused" : "ok", detail: removal.detail)
        var metadata: Logger.Metadata = [
            "event": "poll", "result": .string(removal.refused ? "refused" : "ok"),
            "entries": .stringConvertible(feed.entryCount), "unique": .stringConvertible(feed.uniqueKeys.count),
            "removed": .stringConvertible(removal.removed), "ms": .stringConvertible((ContinuousClock.now - started).milliseconds),
            "body": .string(body),
        ]
        if let jobsBefore, let jobsNow = SyncActor.jobsEntered { metadata["silo_jobs"] = .stringConvertible(jobsNow - jobsBefore) }
        logger.info("feed poll", metadata: metadata)
        try? await core.owned.makeDurable()
        return true
    }

    private func scheduleNextPoll() {
        let interval = configuration.schedule.pollInterval.seconds * JitterRandom.number(in: 0.9...1.1)
        nextPollAt = ContinuousClock.now.advanced(by: .milliseconds(Int64(interval * 1000)))
    }

    /// What the removal of items gone from the feed did, for the poll's status and line.
    private func noteRemoval(_ outcome: GoneItemRemoval.Outcome) -> (removed: Int, refused: Bool, detail: String?) {
        if let failure = outcome.lastError { errors.record(failure) }
        if let refusal = outcome.refusal {
            errors.record(refusal)
            return (0, true, refusal)
        }
        return (outcome.removed, false, outcome.removed > 0 ? "removed \(outcome.removed) gone from the feed" : nil)
    }

    /// What `SIGHUP` asks for: every failed transfer retried now, a full pass over the feed, every owned file
    /// checked. Answers that were no image at all keep their record (an hour, or until the feed gives the item
    /// another tag): asking a gallery again for its 10,000 error items at every reload (logrotate's included)
    /// cost seconds of CPU and 10,000 requests, for answers that had not changed. Returns the number of the
    /// scheduler pass that carries it out, for `waitForPass(_:)`.
    func reload() async -> Int {
        loader.forgetTransientFailures()
        pollNow(fullPass: true)
        repairs.rescanAll()
        return passes.nextPass
    }

    /// Returns once scheduler pass `pass` (from `reload()`) has ended, or when the calling task is cancelled.
    func waitForPass(_ pass: Int) async {
        await passes.waitUntilEnded(pass)
    }

    // MARK: - Scrub

    /// One scrub step; what it finds damaged is repaired now (`event=repair reason=corrupt|missing`).
    func scrubStep() async {
        await repairs.repair(await scrubber.step().damaged)
    }

    /// A whole scrub pass now (`emojiart-sync scrub` asked for it through `RequestInbox`), published in the status
    /// as `lastScrub` as soon as it is done, then the repairs of what it found damaged.
    @discardableResult
    func scrubNow() async -> AgentStatus.Scrub {
        let found = await scrubber.fullPass()
        scrubSequence += 1
        let record = AgentStatus.Scrub(
            sequence: scrubSequence, files: found.files, bytes: found.bytes,
            damaged: found.damaged.map { AssetFileName.name(for: $0.key) }, at: Date())
        lastScrub = record
        core.log.changes.ring()  // `scrub` waits for the status file to show it
        await repairs.repair(found.damaged)
        return record
    }

    // MARK: - Purges

    /// `SIGUSR1`: drops the memory cache (the next accesses are disk hits).
    func purgeMemory() async -> AgentStatus.Purge {
        let dropped = loader.purge()
        await FreedMemory.release()  // what the cache held goes back to the kernel, not to malloc's free lists
        return recordPurge(scope: "memory", entries: dropped.entries, bytes: dropped.bytes)
    }

    /// `SIGUSR2`: removes the agent's own files, empties the index and the memory cache, then fetches the
    /// whole feed again (network hits). Files the agent did not write stay.
    func purgeDisk() async -> AgentStatus.Purge {
        var removed = (files: 0, bytes: 0)
        do {
            removed = try await core.owned.clear()
        } catch {
            errors.record(String(describing: error))
            logger.error("disk purge incomplete", metadata: ["event": "purge", "scope": "disk", "error": .string(String(describing: error))])
        }
        _ = loader.purge()
        loader.forgetFailures()  // everything is fetched again now, failing assets included
        let record = recordPurge(scope: "disk", entries: removed.files, bytes: removed.bytes)
        await repairs.refetch(feedKeys, reason: nil)
        return record
    }

    private func recordPurge(scope: String, entries: Int, bytes: Int) -> AgentStatus.Purge {
        purgeSequence += 1
        let record = AgentStatus.Purge(sequence: purgeSequence, scope: scope, entries: entries, bytes: bytes, at: Date())
        lastPurge = record
        core.log.changes.ring()  // `purge` waits for the status file to show it
        logger.notice("purged", metadata: [
            "event": "purge", "scope": .string(scope), "entries": .stringConvertible(entries), "bytes": .stringConvertible(bytes),
        ])
        return record
    }

    // MARK: - Status

    /// A snapshot for `status.json`. Costs the same at any gallery size: every figure is a counter kept as
    /// events happen.
    func status(base: AgentStatus) async -> AgentStatus {
        var status = base
        status.assets.total = feedKeys.count
        do {
            (status.assets.ok, status.assets.missing, status.assets.failing) = try core.pipeline.assetStates()
        } catch {
            errors.report(error, while: "counting the assets' states for the status")
        }
        status.wakeUps = wakeUps
        status.indexFiles = core.owned.count
        status.hits.memory = core.log.hits.memory
        status.hits.disk = core.log.hits.disk
        status.hits.network = core.log.hits.network
        status.repairs = core.log.repairs
        status.bytesFetched = core.log.bytesFetched
        status.memoryBytes = loader.cachedBytes
        status.lastPoll = lastPoll
        // The newest of what went wrong: the agent's own work, or an asset's last failure.
        switch (errors.last, core.log.lastAssetFailure) {
        case (let own?, let asset?): status.lastError = asset.at > errors.lastAt ? asset.message : own
        case (let own?, nil): status.lastError = own
        case (nil, let asset?): status.lastError = asset.message
        case (nil, nil): status.lastError = nil
        }
        status.lastPurge = lastPurge
        status.lastScrub = lastScrub
        status.lastMovedAside = core.log.lastMovedAside
        status.waiting = fetcher.serverWaits.summary.map {
            AgentStatus.Waiting(scope: $0.wholeGallery ? "gallery" : "urls", urls: $0.urls, status: $0.status, until: $0.until)
        }
        status.nextPoll = Date().addingTimeInterval((nextPollAt - ContinuousClock.now).seconds)
        return status
    }
}
