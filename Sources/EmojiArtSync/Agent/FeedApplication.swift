import Logging

/// Brings DIR in line with an accepted feed: the one algorithm of `--once` and of the agent's polls.
///
/// 1. The feed replaces the one kept; when its items changed, one walk of the index finds what is stored, stale,
///    unstored and gone (`FeedCatalogue`), and a failure remembered for an item the feed now gives another tag is
///    forgotten: it was the item's as it was (an answer that was no image is kept "for an hour or until the feed
///    gives it another tag", the man page).
/// 2. The agent's files of items gone from the feed are removed, behind `--max-delete` (`GoneItemRemoval`).
/// 3. A full pass (`--once`, the agent's first poll, `SIGHUP`) accesses every entry, duplicates included, each
///    asset logged once (`FeedPass`).
/// 4. Stored items whose feed tag changed are fetched again, conditionally (`AccessPipeline.refresh`).
/// 5. Whatever is still not stored and has no failure waiting for its retry is fetched.
///
/// The caller runs steps 4 and 5's jobs (`runJobs`): the agent marks the keys as being repaired, so a watcher's
/// repair of the same key waits; `--once` runs them within the access window.
@SyncActor
struct FeedApplication {
    /// What steps 4 and 5 ask for.
    enum Jobs {
        case refresh([AssetKey])
        case fetch([AssetKey])
    }

    let core: MirrorCore
    let window: Int
    let maxDeletePercent: Int
    let logger: Logger
    /// Runs the refreshes or fetches (each access logs its own outcome).
    let runJobs: @SyncActor (Jobs) async -> Void

    /// What applying a feed came to.
    struct Result {
        /// False: the same items as the feed kept (a new `ETag`, the same bytes).
        var itemsChanged = false
        var removal = GoneItemRemoval.Outcome()
        /// The most misses loading at once in the full pass, and the most jobs it held waiting to start.
        var peaks = FeedPass.Peaks()
        /// Feed keys still not stored at the end.
        var unstored: [AssetKey] = []
    }

    /// Applies `feed`; `collect` sees the full pass's outcomes. `comparingOffSilo`: the comparison with the feed
    /// kept runs on the blocking-I/O pool (the agent, whose silo serves repairs meanwhile). Throws when the index
    /// cannot be read; stops early, having done part, when the task is cancelled.
    ///
    /// `indexRows`: the index's rows, read off the silo while the feed was fetched (`--once`): a new feed is
    /// matched with them off the silo instead of walking the index in it.
    ///
    /// `dryRun` (`--once --dry-run`, over a copy of the index in memory): every step decides as it would, and the
    /// decisions go to the plan instead of being carried out: the removals the guard allows, the pass's misses
    /// (`FeedPass.preview`), and, through the caller's `runJobs`, the refreshes and fetches.
    func apply(
        _ feed: GalleryFeed, fullPass: Bool, comparingOffSilo: Bool, indexRows: IndexRowSnapshot? = nil,
        dryRun: DryRunPlan? = nil,
        collect: @escaping @Sendable (FeedPass.Outcome) -> Void = { _ in }
    ) async throws(SyncError) -> Result {
        var result = Result()
        let catalogue = core.catalogue
        let memory = core.memory
        // The feed the failures remembered now were had under (a value: the catalogue's next feed does not change it).
        let kept = catalogue.feed
        if let indexRows {
            result.itemsChanged = try await catalogue.replace(feed.items, matching: indexRows)
        } else {
            result.itemsChanged = comparingOffSilo
                ? try await catalogue.replaceComparingOffSilo(feed.items)
                : try catalogue.replace(feed.items)
        }
        if result.itemsChanged {
            // The failing keys as they are after the comparison's await: one that failed meanwhile failed under the
            // kept feed's tag too (the new feed is the catalogue's only from here).
            let new = catalogue.feed
            for key in memory.failingKeysUnordered where kept[key] != new[key] {
                memory.forgetFailure(key)
            }
        }
        // The catalogue keeps this feed, or one with the same keys in the same order: its positions are the feed's.
        let feedVersion = catalogue.version
        let removal = GoneItemRemoval(owned: core.owned, maxDeletePercent: maxDeletePercent, logger: logger)
        let removals = removal.plan(gone: try catalogue.current().gone, feedIsEmpty: feed.uniqueKeys.isEmpty)
        if let dryRun { dryRun.note(removals) } else { result.removal = await removal.run(removals) }
        if fullPass {
            let pass = FeedPass(core: core, window: window)
            if let dryRun {
                await pass.preview(feed, feedVersion: feedVersion, into: dryRun)
            } else {
                result.peaks = await pass.run(feed, feedVersion: feedVersion, collect: collect)
            }
        }
        if Task.isCancelled { return result }
        await runJobs(.refresh(try catalogue.current().stale))
        if Task.isCancelled { return result }
        await runJobs(.fetch(try catalogue.current().unstored.filter { !memory.hasFailureOnRecord($0) }))
        result.unstored = try catalogue.current().unstored
        return result
    }
}
