import CurlHTTP
import Logging

/// Runs passes over the feed (`--once`): fetch the feed, then apply it (`FeedApplication`, the algorithm the agent's
/// polls use too): gone items removed, every entry accessed (duplicates included, as the book's app does) a batch at
/// a time (`FeedPass`), misses loaded within a bounded window (`accessWindow` pending accesses, whatever the feed's
/// size), changed items refreshed.
///
/// Holds no mutable state of its own; the mirror's parts own the caches.
struct SyncEngine: Sendable {
    let core: MirrorCore
    let fetcher: AssetFetcher
    /// Accesses pending at once.
    let accessWindow: Int
    /// The mass-deletion guard for files of items gone from the feed (`--max-delete`).
    let maxDeletePercent: Int
    private let logger: Logger

    init(
        core: MirrorCore, fetcher: AssetFetcher, accessWindow: Int, maxDeletePercent: Int = 50, logger: Logger
    ) {
        self.core = core
        self.fetcher = fetcher
        self.accessWindow = accessWindow
        self.maxDeletePercent = maxDeletePercent
        self.logger = logger
    }

    /// One full pass. Throws only for what makes the whole pass impossible (feed unreachable or unreadable,
    /// directory unusable); per-asset failures are in the report. `onProgress` is told after each distinct asset
    /// of the pass is done (see `SyncProgress`): the terminal's progress line.
    @SyncActor
    func syncOnce(onProgress: (@Sendable (SyncProgress) -> Void)? = nil) async throws -> SyncReport {
        let clock = ContinuousClock()
        let start = clock.now
        let jobsBefore = SyncActor.jobsEntered
        // The index's rows are read off the silo while the feed downloads and decodes (each on a core of its own);
        // a read that fails leaves the walk to the silo, which reports what is wrong with the index.
        let source = core.index.snapshotSource()
        async let indexRows = Self.readRows(source)
        let snapshot = await readSnapshot()
        let (feed, replacement) = try await fetchFeed(bodyFolder: core.storage.temporaryFolder, snapshot: snapshot)
        // A feed that changed is kept for the next run while this one's pass runs.
        async let snapshotWritten: Void = writeSnapshot(replacement)
        var report = SyncReport()
        report.entries = feed.entryCount
        report.uniqueAssets = feed.uniqueKeys.count
        report.rejected = feed.rejections
        let log = core.log
        let before = (bytes: log.bytesFetched, repairs: log.repairs, filesRead: log.filesRead)

        let tally = OnceTally(total: feed.uniqueKeys.count)
        onProgress?(tally.current.progress)
        log.beginPass()
        let pipeline = core.pipeline
        let window = accessWindow
        let application = FeedApplication(
            core: core, window: accessWindow, maxDeletePercent: maxDeletePercent, logger: logger
        ) { jobs in
            switch jobs {
            case .refresh(let keys):
                await forEachBounded(keys, limit: window) { key in
                    _ = try? await pipeline.refresh(key)  // each failure is logged and counted by the access itself
                }
            case .fetch(let keys):
                await forEachBounded(keys, limit: window) { key in _ = try? await pipeline.refetch(key) }
            }
        }
        let applied = try await application.apply(
            feed, fullPass: true, comparingOffSilo: false, indexRows: await indexRows
        ) { outcome in
            if let progress = tally.note(outcome) { onProgress?(progress) }
        }
        let counted = tally.current
        report.hits = counted.hits
        report.removed = applied.removal.removed
        report.deletionRefused = applied.removal.refusal
        report.peakAccessesInFlight = applied.peaks.loading
        report.peakJobsQueued = applied.peaks.queued
        let unstored = Set(applied.unstored)
        for (position, key) in feed.uniqueKeys.enumerated() {
            if counted.succeeded(position), !unstored.contains(key) {
                report.available += 1
            } else {
                let failure: SyncReport.Failure.Cause =
                    switch counted.firstFailures[Int32(position)] {
                    case .some(.some(let error)): .error(error)
                    case .some(.none): .failed
                    case .none: .notStored
                    }
                report.failures.append(SyncReport.Failure(key: key, cause: failure))
            }
        }
        try await core.owned.makeDurable()
        await snapshotWritten
        report.bytesFetched = log.bytesFetched - before.bytes
        report.repairs = log.repairs - before.repairs
        report.filesRead = log.filesRead - before.filesRead
        report.duration = clock.now - start
        if let jobsBefore, let jobsNow = SyncActor.jobsEntered { report.siloJobs = jobsNow - jobsBefore }
        log.endPass(extra: summary(report))
        return report
    }

    /// The index's rows from `source`, read on the blocking-I/O pool; nil when there is no file to read, or the
    /// read failed.
    private static func readRows(_ source: (path: String, changesBefore: Int64)?) async -> IndexRowSnapshot? {
        guard let source else { return nil }
        return try? await BlockingIO.run { () throws(SyncError) in
            try IndexRowSnapshot.read(path: source.path, changesBefore: source.changesBefore)
        }
    }

    /// What `syncOnce` would do (`--dry-run`), on a core over a copy of the index (`MirrorCore.openForDryRun`): the
    /// feed is fetched and applied by the same steps, each decision noted instead of carried out. No image is
    /// downloaded. Throws what would make the real pass impossible (the feed unreachable or unreadable).
    @SyncActor
    func planOnce(notice: String? = nil) async throws -> DryRunReport {
        let (feed, _) = try await fetchFeed()
        let plan = DryRunPlan()
        for rejection in feed.rejections { plan.noteRejected(rejection) }
        let application = FeedApplication(
            core: core, window: accessWindow, maxDeletePercent: maxDeletePercent, logger: logger
        ) { jobs in
            switch jobs {
            case .refresh(let keys): for key in keys { plan.noteRefresh(key) }
            // The pass decided these already, but for a key it was told to leave (none in a fresh process).
            case .fetch(let keys): for key in keys { plan.note(key, .fetch(nil)) }
            }
        }
        _ = try await application.apply(feed, fullPass: true, comparingOffSilo: false, dryRun: plan)
        return plan.report(assets: feed.uniqueKeys.count, notice: notice)
    }

    /// The feed, its body through a file in `bodyFolder` when given (a dry run writes nothing, not even there).
    ///
    /// With the last run's `snapshot` the request is conditional: a `304 Not Modified`, or a body with the
    /// snapshot's bytes, is the snapshot's feed, read from it instead of downloaded and decoded. Otherwise the feed
    /// is decoded, and returned with its snapshot for the next run (`replacement`).
    private func fetchFeed(
        bodyFolder: TemporaryFolder? = nil, snapshot: FeedSnapshot? = nil
    ) async throws -> (feed: GalleryFeed, replacement: FeedSnapshot.Update?) {
        let fetched: (feed: GalleryFeed, replacement: FeedSnapshot.Update?)
        let body: String
        do {
            (fetched, body) = try await fetchFeedOrUseSnapshot(bodyFolder: bodyFolder, snapshot: snapshot)
        } catch {
            logger.error("feed unavailable", metadata: [
                "event": "feed", "result": "failed", "url": .string(fetcher.server.feedURL),
                "error": .string(String(describing: error)),
            ])
            throw error
        }
        let feed = fetched.feed
        for rejection in feed.rejections {
            logger.warning("feed item refused", metadata: [
                "event": "reject", "url": .string(rejection.url), "reason": .string(rejection.reason),
            ])
        }
        logger.info("feed", metadata: [
            "event": "feed", "result": "ok", "entries": .stringConvertible(feed.entryCount),
            "unique": .stringConvertible(feed.uniqueKeys.count), "rejected": .stringConvertible(feed.rejections.count),
            "body": .string(body),
        ])
        return fetched
    }

    /// `fetchFeed`'s request and what became of the body: `decoded`, or read from the snapshot after a `304`
    /// (`not_modified`) or the same bytes (`unchanged`).
    private func fetchFeedOrUseSnapshot(
        bodyFolder: TemporaryFolder?, snapshot: FeedSnapshot?
    ) async throws -> ((feed: GalleryFeed, replacement: FeedSnapshot.Update?), body: String) {
        let validators = snapshot.flatMap { $0.validators.isEmpty ? nil : $0.validators }
        let fetched = try await fetcher.fetchFeed(
            validators: validators, bodyFolder: bodyFolder, unchangedDigest: snapshot?.bodyDigest)
        switch fetched {
        case .changed(let feed, let received, let digest, _):
            return ((feed, .of(feed, validators: received, bodyDigest: digest)), "decoded")
        case .notModified, .sameBody:
            guard let snapshot else { throw HTTPClientError.httpStatus(304, url: fetcher.server.feedURL) }
            // The same bytes under new validators: the snapshot takes them, so that the next run's request can be
            // answered `304`.
            var replacement: FeedSnapshot.Update?
            var body = "not_modified"
            if case .sameBody(let received) = fetched {
                body = "unchanged"
                if received != snapshot.validators { replacement = .revalidated(snapshot, validators: received) }
            }
            do {
                let feed = try await BlockingIO.run { () throws(FeedSnapshot.SnapshotUnusable) in try snapshot.feed() }
                return ((feed, replacement), body)
            } catch {
                // The gallery says the feed is the snapshot's, but the snapshot does not make one: asked again, whole.
                logger.warning("feed snapshot not used", metadata: [
                    "event": "feed", "result": "snapshot_unusable", "error": .string(String(describing: error)),
                ])
                return try await fetchFeedOrUseSnapshot(bodyFolder: bodyFolder, snapshot: nil)
            }
        }
    }

    /// The last run's feed snapshot (`FeedSnapshot`) for this gallery, read on the blocking-I/O pool; nil when
    /// there is none, or when it cannot be used (said in the log: the feed is then asked for whole).
    private func readSnapshot() async -> FeedSnapshot? {
        let directory = core.storage.directory
        let feedURL = fetcher.server.feedURL
        do {
            return try await BlockingIO.run { try FeedSnapshot.read(in: directory, feedURL: feedURL) }
        } catch {
            logger.warning("feed snapshot not used", metadata: [
                "event": "feed", "result": "snapshot_unusable", "path": .string(FeedSnapshot.path(in: directory)),
                "error": .string(String(describing: error)),
            ])
            return nil
        }
    }

    /// Writes the snapshot `update` makes for the next run, on the blocking-I/O pool; a failure is said in the log
    /// and costs the next run a whole feed.
    private nonisolated func writeSnapshot(_ update: FeedSnapshot.Update?) async {
        guard let update else { return }
        let directory = core.storage.directory
        let gate = core.storage.gate
        let feedURL = fetcher.server.feedURL
        do {
            // Encoded there too (about 40 ms at 100,000 items), not in the silo before the pass.
            try await BlockingIO.run { try update.snapshot(feedURL: feedURL).write(in: directory, gate: gate) }
        } catch {
            logger.warning("cannot keep the feed snapshot", metadata: [
                "event": "feed", "result": "snapshot_not_written", "error": .string(String(describing: error)),
            ])
        }
    }

    /// What a `--once` run's `event=pass` line says besides the pass's counts: the run's totals, from its start.
    private func summary(_ report: SyncReport) -> Logger.Metadata {
        [
            "assets": .stringConvertible(report.uniqueAssets), "ok": .stringConvertible(report.available),
            "failed": .stringConvertible(report.failures.count), "rejected": .stringConvertible(report.rejected.count),
            "removed": .stringConvertible(report.removed), "files_read": .stringConvertible(report.filesRead),
            "ms": .stringConvertible(report.duration.milliseconds),
        ].merging(report.siloJobs.map { ["silo_jobs": .stringConvertible($0)] } ?? [:]) { kept, _ in kept }
    }
}
