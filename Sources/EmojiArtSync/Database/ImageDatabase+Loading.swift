import CurlHTTP
import FoundationEssentials
import Logging

/// Below memory: the disk, then the network, for one key whose access missed in its batch.
extension ImageDatabase {
    /// One decision in the silo (one read of the index, one `lstat` of the path), then one job off it, then the
    /// group commit: a miss visits the silo before and after its fetch, nothing in the middle.
    func loadBelowMemory(_ key: AssetKey) async throws -> (Asset, Hit) {
        var look = try lookUp(key)
        if let entry = look.entry {
            switch try await readFromDisk(entry, of: key) {
            case .hit(let asset):
                logAccess(key, hit: .disk, asset: asset)
                return (asset, .disk)
            case .notStored:
                // The row went while the file was read (a purge): decided again from what the index says now.
                look = try lookUp(key)
                try refuseUnusableAnswer(look.unusable, of: key)
            case .damaged(let reason):
                noteRepair(of: key, reason: reason)
            }
        } else {
            try refuseUnusableAnswer(look.unusable, of: key)
        }
        return try await loadFromNetwork(key, owned: look.entry != nil, unusableOnRecord: look.unusable != nil)
    }

    /// A refetch of a key with no file goes to the network unless its answer is on record as not an image
    /// (a repair of a stored file always does).
    func loadForRefetch(_ key: AssetKey, priority: RequestPriority) async throws -> (Asset, Hit) {
        let look = try lookUp(key)
        if look.entry == nil { try refuseUnusableAnswer(look.unusable, of: key) }
        return try await loadFromNetwork(
            key, owned: look.entry != nil, unusableOnRecord: look.unusable != nil, priority: priority)
    }

    /// What the index says of `key`: its row and its unusable answer on record, read in one transaction (each
    /// statement outside one takes and drops SQLite's locks: two `fcntl`s apiece).
    private func lookUp(_ key: AssetKey) throws(SyncError) -> (entry: IndexEntry?, unusable: UnusableAnswer?) {
        try index.readTransaction { () throws(SyncError) in (try index.entry(for: key), try index.unusableAnswer(for: key)) }
    }

    /// One job off the silo (fetch, validate, hash, write a temporary file: `AssetFetcher.fetchAndStage`), then
    /// the group commit. `owned`: the index has a row for `key` (looked up in this turn of the silo).
    /// `unusableOnRecord`: the index records an answer of the server that was no image.
    func loadFromNetwork(
        _ key: AssetKey, owned: Bool, unusableOnRecord: Bool, priority: RequestPriority = .normal
    ) async throws -> (Asset, Hit) {
        try refuseTakenPath(key, owned: owned)  // no fetch for a path the agent could not write anyway
        let staged: StagedAsset
        do {
            staged = try await fetcher.fetchAndStage(key, in: directory.temporaryDirectory, priority: priority)
        } catch {
            if ImageLoader.answeredButUnusable(error) {
                do {
                    try index.recordUnusableAnswer(
                        UnusableAnswer(tag: feedTags[key], reason: String(describing: error), answeredAt: Date()), for: key)
                } catch let trouble {
                    // The access fails for what the server answered; not recording it costs one more request later.
                    noteIndexTrouble(trouble, while: "recording that \(key) answered with no image")
                }
            }
            throw error
        }
        if unusableOnRecord { try index.forgetUnusableAnswer(for: key) }
        try await commit(staged, tag: feedTags[key])
        logAccess(key, hit: .network, asset: staged.asset)
        return (staged.asset, .network)
    }

    /// Throws when `answer` (the one on record for `key`) says its URL answered with something that is not an
    /// image, under the tag the feed gives it now, less than `RetryPolicy.unusableAnswer` ago: asking again would
    /// get the same.
    func refuseUnusableAnswer(_ answer: UnusableAnswer?, of key: AssetKey) throws {
        if let refusal = refusal(for: answer, of: key) { throw refusal }
    }

    /// The refusal of an access of `key` for `answer` on record (see `refuseUnusableAnswer`), or nil.
    func refusal(for answer: UnusableAnswer?, of key: AssetKey) -> UnusableAnswerOnRecord? {
        guard let answer, answer.tag == feedTags[key] else { return nil }
        let retryAt = answer.answeredAt.addingTimeInterval(loader.retryPolicy.unusableAnswer.seconds)
        return retryAt > Date() ? UnusableAnswerOnRecord(key: key, answer: answer, retryAt: retryAt) : nil
    }

    /// A changed feed tag: fetched conditionally, stored only when the bytes differ.
    func loadFresh(_ key: AssetKey, stored entry: IndexEntry, tag: String?) async throws -> (Asset, Hit) {
        refreshes += 1
        let validators = HTTPValidators(etag: entry.etag, lastModified: entry.lastModified)
        let result: String
        let asset: Asset
        switch try await fetcher.fetchAsset(key, validators: validators.isEmpty ? nil : validators) {
        case .notModified:
            result = "not_modified"
            asset = Asset(trustedOnDisk: key, size: entry.size, sha256: entry.sha256)
            try retag(entry, tag: tag, validators: validators)
        case .fetched(let fetched, let newValidators):
            asset = fetched
            if fetched.sha256 == entry.sha256 {
                result = "unchanged"
                try retag(entry, tag: tag, validators: newValidators)
            } else {
                result = "updated"
                updates += 1
                try await store(fetched, tag: tag, validators: newValidators)
            }
        }
        changes.ring()
        logger.info("refreshed changed item", metadata: [
            "event": "refresh", "key": .string(key.rawValue), "result": .string(result),
            "file": .string(entry.name), "bytes": .stringConvertible(asset.bytes?.count ?? 0),
        ])
        return (asset, .network)
    }

    /// Records a new tag and validators on a row, if the row is still the one that was looked at.
    private func retag(_ entry: IndexEntry, tag: String?, validators: HTTPValidators) throws(SyncError) {
        guard var now = try index.entry(named: entry.name), now.sha256 == entry.sha256 else { return }
        now.tag = tag
        now.etag = validators.etag
        now.lastModified = validators.lastModified
        try index.put(now)
    }

    private enum DiskLookup {
        case hit(Asset)
        case notStored
        case damaged(DamageReason)
    }

    private func readFromDisk(_ entry: IndexEntry, of key: AssetKey) async throws -> DiskLookup {
        let name = entry.name
        switch try await check(entry) {
        case .trusted:
            return .hit(Asset(trustedOnDisk: key, size: entry.size, sha256: entry.sha256))
        case .verified(let asset):
            return .hit(asset)
        case .changedMeanwhile:
            return try index.entry(named: name) == nil ? .notStored : .damaged(.corrupt)
        case .damaged(let reason):
            return .damaged(reason)
        }
    }
}
