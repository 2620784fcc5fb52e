import Logging

/// Runs passes over the feed: fetch the feed, then access every entry (duplicates included, as the book's
/// app does) through the `ImageDatabase`, all concurrently, so duplicates of a key in flight join one load.
///
/// Holds no mutable state of its own; the database and loader own the caches.
public struct SyncEngine: Sendable {
    public let database: ImageDatabase
    public let fetcher: AssetFetcher
    private let logger: Logger
    /// Told after each distinct asset of a pass is done (see `SyncProgress`); the terminal progress line.
    private let onProgress: (@Sendable (SyncProgress) -> Void)?

    public init(
        database: ImageDatabase, fetcher: AssetFetcher, logger: Logger,
        onProgress: (@Sendable (SyncProgress) -> Void)? = nil
    ) {
        self.database = database
        self.fetcher = fetcher
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

        var succeeded = Set<AssetKey>()
        var failureReasons: [AssetKey: String] = [:]
        var progress = SyncProgress(done: 0, total: feed.uniqueKeys.count, bytes: 0)
        onProgress?(progress)
        await withTaskGroup(of: AccessOutcome.self) { group in
            for key in feed.entries {
                group.addTask {
                    do {
                        let (asset, hit) = try await database.image(key)
                        return AccessOutcome(key: key, hit: hit, bytes: asset.bytes.count, failure: nil)
                    } catch {
                        return AccessOutcome(key: key, hit: nil, bytes: 0, failure: String(describing: error))
                    }
                }
            }
            for await outcome in group {
                if onProgress != nil, !succeeded.contains(outcome.key), failureReasons[outcome.key] == nil {
                    progress.done += 1
                    progress.bytes += outcome.bytes
                    onProgress?(progress)
                }
                if let hit = outcome.hit {
                    report.hits[hit, default: 0] += 1
                    succeeded.insert(outcome.key)
                } else if failureReasons[outcome.key] == nil {
                    failureReasons[outcome.key] = outcome.failure
                }
            }
        }
        for key in feed.uniqueKeys {
            if succeeded.contains(key), await database.isStored(key) {
                report.available += 1
            } else {
                report.failures.append((key, failureReasons[key] ?? "not stored on disk"))
            }
        }
        try await database.flushManifest()
        let after = await counters()
        report.bytesFetched = after.bytes - before.bytes
        report.repairs = after.repairs - before.repairs
        report.duration = clock.now - start
        logSummary(report)
        return report
    }

    /// What one access came to; crosses from the child task to the pass.
    private struct AccessOutcome: Sendable {
        let key: AssetKey
        let hit: Hit?
        let bytes: Int
        let failure: String?
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

    private func counters() async -> (bytes: Int, repairs: Int) {
        await (database.bytesFetched, database.repairs)
    }

    private func logSummary(_ report: SyncReport) {
        logger.info("sync pass done", metadata: [
            "event": "summary", "assets": .stringConvertible(report.uniqueAssets),
            "ok": .stringConvertible(report.available), "failed": .stringConvertible(report.failures.count),
            "rejected": .stringConvertible(report.rejected.count),
            "memory": .stringConvertible(report.hits[.memory] ?? 0), "disk": .stringConvertible(report.hits[.disk] ?? 0),
            "network": .stringConvertible(report.hits[.network] ?? 0), "bytes": .stringConvertible(report.bytesFetched),
            "repairs": .stringConvertible(report.repairs), "ms": .stringConvertible(report.duration.milliseconds),
        ])
    }
}
