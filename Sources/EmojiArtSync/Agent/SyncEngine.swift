import Logging

/// Runs passes over the feed (`--once`): fetch the feed, then access every entry (duplicates included, as the
/// book's app does) through the `ImageDatabase` a batch at a time (`FeedPass`): hits answered a batch per silo
/// visit, misses loaded within a bounded window (`accessWindow` pending accesses, whatever the feed's size), so
/// duplicates of a key in flight join one load and the rest are memory hits.
///
/// Holds no mutable state of its own; the database and loader own the caches.
public struct SyncEngine: Sendable {
    public let database: ImageDatabase
    public let fetcher: AssetFetcher
    /// Accesses pending at once.
    public let accessWindow: Int
    /// The mass-deletion guard for files of items gone from the feed (`--max-delete`).
    public let maxDeletePercent: Int
    private let logger: Logger
    /// Told after each distinct asset of a pass is done (see `SyncProgress`); the terminal progress line.
    private let onProgress: (@Sendable (SyncProgress) -> Void)?

    public init(
        database: ImageDatabase, fetcher: AssetFetcher, accessWindow: Int, maxDeletePercent: Int = 50, logger: Logger,
        onProgress: (@Sendable (SyncProgress) -> Void)? = nil
    ) {
        self.database = database
        self.fetcher = fetcher
        self.accessWindow = accessWindow
        self.maxDeletePercent = maxDeletePercent
        self.logger = logger
        self.onProgress = onProgress
    }

    /// One full pass. Throws only for what makes the whole pass impossible (feed unreachable or unreadable,
    /// directory unusable); per-asset failures are in the report.
    public func syncOnce() async throws -> SyncReport {
        let clock = ContinuousClock()
        let start = clock.now
        let feed = try await fetchFeed()
        var report = SyncReport()
        report.entries = feed.entries.count
        report.uniqueAssets = feed.uniqueKeys.count
        report.rejected = feed.rejections
        let before = await counters()
        // The files of items gone from the feed are removed as the agent removes them, behind the same guard.
        let removal = try await GoneItemRemoval(database: database, maxDeletePercent: maxDeletePercent, logger: logger)
            .run(keeping: feed.uniqueKeys)
        report.removed = removal.removed
        report.deletionRefused = removal.refusal
        try await database.setFeed(feed.uniqueKeys, tags: feed.tags)

        var succeeded = Set<AssetKey>()
        var failureReasons: [AssetKey: String] = [:]
        var progress = SyncProgress(done: 0, total: feed.uniqueKeys.count, bytes: 0)
        onProgress?(progress)
        let visitsBefore = await database.siloVisits
        await database.beginPass()
        report.peakAccessesInFlight = await FeedPass(database: database, window: accessWindow).run(feed.entries) { outcome in
            // The line counts each key once: done at its first outcome, failed until an access has it.
            if onProgress != nil, !succeeded.contains(outcome.key) {
                let first = failureReasons[outcome.key] == nil
                if first { progress.done += 1 }
                if outcome.hit != nil {
                    progress.bytes += outcome.bytes
                    if !first { progress.failed -= 1 }
                    onProgress?(progress)
                } else if first {
                    progress.failed += 1
                    onProgress?(progress)
                }
            }
            if let hit = outcome.hit {
                report.hits[hit, default: 0] += 1
                succeeded.insert(outcome.key)
            } else if failureReasons[outcome.key] == nil {
                failureReasons[outcome.key] = outcome.failure
            }
        }
        report.siloVisits = await database.siloVisits - visitsBefore
        // Stored items whose feed tag changed: fetched again, conditionally, replaced only when their bytes differ.
        await forEachBounded(try await database.staleKeys(), limit: accessWindow) { [database] key in
            _ = try? await database.refresh(key)  // each failure is logged and counted by the access itself
        }
        let unstored = Set(try await database.unstoredKeys(among: feed.uniqueKeys))
        for key in feed.uniqueKeys {
            if succeeded.contains(key), !unstored.contains(key) {
                report.available += 1
            } else {
                report.failures.append((key, failureReasons[key] ?? "not stored on disk"))
            }
        }
        try await database.makeDurable()
        let after = await counters()
        report.bytesFetched = after.bytes - before.bytes
        report.repairs = after.repairs - before.repairs
        report.filesRead = after.filesRead - before.filesRead
        report.duration = clock.now - start
        await database.endPass(extra: summary(report))
        return report
    }

    private func fetchFeed() async throws -> GalleryFeed {
        let feed: GalleryFeed
        do {
            feed = try await fetcher.fetchFeed()
        } catch {
            logger.error("feed unavailable", metadata: [
                "event": "feed", "result": "failed", "url": .string(fetcher.server.feedURL),
                "error": .string(String(describing: error)),
            ])
            throw error
        }
        for rejection in feed.rejections {
            logger.warning("feed item refused", metadata: [
                "event": "reject", "url": .string(rejection.url), "reason": .string(rejection.reason),
            ])
        }
        logger.info("feed", metadata: [
            "event": "feed", "result": "ok", "entries": .stringConvertible(feed.entries.count),
            "unique": .stringConvertible(feed.uniqueKeys.count), "rejected": .stringConvertible(feed.rejections.count),
        ])
        return feed
    }

    private func counters() async -> (bytes: Int, repairs: Int, filesRead: Int) {
        await (database.bytesFetched, database.repairs, database.filesRead)
    }

    /// What a `--once` run's `event=pass` line says besides the pass's counts: the run's totals, from its start.
    private func summary(_ report: SyncReport) -> Logger.Metadata {
        [
            "assets": .stringConvertible(report.uniqueAssets), "ok": .stringConvertible(report.available),
            "failed": .stringConvertible(report.failures.count), "rejected": .stringConvertible(report.rejected.count),
            "removed": .stringConvertible(report.removed), "files_read": .stringConvertible(report.filesRead),
            "ms": .stringConvertible(report.duration.milliseconds),
        ]
    }
}
