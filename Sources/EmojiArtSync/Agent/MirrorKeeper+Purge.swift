import FoundationEssentials
import Logging

/// Purges (`SIGUSR1`, `SIGUSR2`) and the status snapshot.
extension MirrorKeeper {
    /// `SIGUSR1`: drops the memory cache (the next accesses are disk hits).
    public func purgeMemory() async -> AgentStatus.Purge {
        let dropped = loader.purge()
        await FreedMemory.release()  // what the cache held goes back to the kernel, not to malloc's free lists
        return recordPurge(scope: "memory", entries: dropped.entries, bytes: dropped.bytes)
    }

    /// `SIGUSR2`: removes the agent's own files, empties the index and the memory cache, then fetches the
    /// whole feed again (network hits). Files the agent did not write stay.
    public func purgeDisk() async -> AgentStatus.Purge {
        var removed = (files: 0, bytes: 0)
        do {
            removed = try await core.owned.clear()
        } catch {
            lastError = String(describing: error)
            logger.error("disk purge incomplete", metadata: ["event": "purge", "scope": "disk", "error": .string(String(describing: error))])
        }
        _ = loader.purge()
        loader.forgetFailures()  // everything is fetched again now, failing assets included
        let record = recordPurge(scope: "disk", entries: removed.files, bytes: removed.bytes)
        await refetch(feedKeys, reason: nil)
        return record
    }

    func recordPurge(scope: String, entries: Int, bytes: Int) -> AgentStatus.Purge {
        purgeSequence += 1
        let record = AgentStatus.Purge(sequence: purgeSequence, scope: scope, entries: entries, bytes: bytes, at: Date())
        lastPurge = record
        core.log.changes.ring()  // `purge` waits for the status file to show it
        logger.notice("purged", metadata: [
            "event": "purge", "scope": .string(scope), "entries": .stringConvertible(entries), "bytes": .stringConvertible(bytes),
        ])
        return record
    }

    /// An error that ends one piece of work but not the agent: logged, shown by `status`, retried later.
    func report(_ error: any Error, while doing: String) {
        lastError = String(describing: error)
        logger.warning("cannot finish work now, will retry", metadata: [
            "event": "error", "while": .string(doing), "error": .string(String(describing: error)),
        ])
    }

    // MARK: - Status

    /// A snapshot for `status.json`. Costs the same at any gallery size: every figure is a counter kept as
    /// events happen.
    public func status(base: AgentStatus) async -> AgentStatus {
        var status = base
        status.assets.total = feedKeys.count
        do {
            (status.assets.ok, status.assets.missing, status.assets.failing) = try core.pipeline.assetStates()
        } catch {
            report(error, while: "counting the assets' states for the status")
        }
        status.wakeUps = wakeUps
        status.indexFiles = core.owned.count
        status.hits.memory = core.log.hits[.memory, default: 0]
        status.hits.disk = core.log.hits[.disk, default: 0]
        status.hits.network = core.log.hits[.network, default: 0]
        status.repairs = core.log.repairs
        status.bytesFetched = core.log.bytesFetched
        status.memoryBytes = loader.cachedBytes
        status.lastPoll = lastPoll
        // The newest of what went wrong: the agent's own work, or an asset's last failure.
        switch (lastError, core.log.lastAssetFailure) {
        case (let own?, let asset?): status.lastError = asset.at > lastErrorAt ? asset.message : own
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
