import Foundation
import Logging

/// Below memory: the disk, then the network, for one key whose access missed in its batch.
extension ImageDatabase {
    func loadBelowMemory(_ key: AssetKey) async throws -> (Asset, Hit) {
        switch try await readFromDisk(key) {
        case .hit(let asset):
            logAccess(key, hit: .disk, asset: asset)
            return (asset, .disk)
        case .notStored:
            try refuseUnusableAnswerOnRecord(key)
        case .damaged(let reason):
            noteRepair(of: key, reason: reason)
        }
        return try await loadFromNetwork(key)
    }

    /// A refetch of a key with no file goes to the network unless its answer is on record as not an image
    /// (a repair of a stored file always does).
    func loadForRefetch(_ key: AssetKey) async throws -> (Asset, Hit) {
        if try !isStored(key) { try refuseUnusableAnswerOnRecord(key) }
        return try await loadFromNetwork(key)
    }

    /// One job off the silo (fetch, validate, hash, write a temporary file), then the group commit.
    func loadFromNetwork(_ key: AssetKey) async throws -> (Asset, Hit) {
        try refuseTakenPath(key)  // no fetch for a path the agent could not write anyway
        let fetch: AssetFetch
        do {
            fetch = try await fetcher.fetchAsset(key, validators: nil)
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
        guard case .fetched(let asset, let validators) = fetch else {
            throw SyncError(.server, "\(fetcher.server.url(for: key)) answered 304 to an unconditional request")
        }
        if try index.unusableAnswer(for: key) != nil { try index.forgetUnusableAnswer(for: key) }  // a read, not a write, per file
        try await store(asset, tag: feedTags[key], validators: validators)
        logAccess(key, hit: .network, asset: asset)
        return (asset, .network)
    }

    /// Throws when the index records that `key`'s URL answered with something that is not an image, under the
    /// tag the feed gives it now, less than `RetryPolicy.unusableAnswer` ago: asking again would get the same.
    func refuseUnusableAnswerOnRecord(_ key: AssetKey) throws {
        guard let answer = try index.unusableAnswer(for: key), answer.tag == feedTags[key] else { return }
        let retryAt = answer.answeredAt.addingTimeInterval(loader.retryPolicy.unusableAnswer.seconds)
        if retryAt > Date() { throw UnusableAnswerOnRecord(key: key, answer: answer, retryAt: retryAt) }
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

    private func readFromDisk(_ key: AssetKey) async throws -> DiskLookup {
        guard let entry = try index.entry(for: key) else { return .notStored }
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
