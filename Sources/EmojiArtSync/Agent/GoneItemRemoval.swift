import Logging

/// Removes the agent's own files of items that left the feed, behind the mass-deletion guard (`--max-delete`):
/// the one rule the background agent and `--once` share (as `rclone sync` deletes behind `--max-delete`).
///
/// A feed that is empty, or that would delete more than `maxDeletePercent` of the agent's files, deletes
/// nothing and says why: a gallery that lost its database should not empty the user's folder. Only files the
/// index records are considered, and each is removed only if its bytes are still what the agent wrote.
@SyncActor
struct GoneItemRemoval {
    let database: ImageDatabase
    let maxDeletePercent: Int
    let logger: Logger

    /// What a removal step did.
    struct Outcome: Sendable {
        var removed = 0
        /// Why nothing was deleted, when the guard refused.
        var refusal: String?
        /// The last file that could not be removed, and why.
        var lastError: String?
    }

    /// Removes the files of owned keys not among `feedKeys`. Throws when the index cannot be read.
    ///
    /// When `feedKeys` is the feed the database keeps (`setFeed` ran first, as the agent's poll does), nothing is
    /// looked at unless the index has rows outside it (every row's key in the feed: the rows counted as stored in
    /// the feed are all of them); otherwise one walk of the index's keys, not of its whole rows.
    func run(keeping feedKeys: [AssetKey]) async throws(SyncError) -> Outcome {
        let isKept = feedKeys == database.feed.keys
        if isKept, database.ownedCount == database.storedInFeed { return Outcome() }
        let keep = isKept ? database.feed : FeedState(keys: feedKeys)
        let ownedCount = database.ownedCount
        var gone: [AssetKey] = []
        try database.index.forEachKey { url, name, _ in
            guard let key = try? AssetKey(indexedURL: url, fileName: name), !keep.contains(key) else { return }
            gone.append(key)
        }
        gone.sort()
        var outcome = Outcome()
        guard !gone.isEmpty else { return outcome }
        let percent = ownedCount == 0 ? 0 : gone.count * 100 / ownedCount
        if feedKeys.isEmpty || percent > maxDeletePercent {
            let why = feedKeys.isEmpty ? "the feed is empty" : "\(percent)% > --max-delete \(maxDeletePercent)%"
            outcome.refusal = "refusing to delete \(gone.count) of \(ownedCount) files (\(why)); nothing deleted. If the gallery really dropped them, allow it with --max-delete 100"
            logger.warning("mass deletion refused", metadata: [
                "event": "delete_guard", "would_delete": .stringConvertible(gone.count), "owned": .stringConvertible(ownedCount),
                "reason": .string(why), "hint": "allow it with --max-delete 100",
            ])
            return outcome
        }
        for key in gone {
            do {
                let bytes = try await database.removeOwnedFile(for: key)
                outcome.removed += 1
                logger.info("removed asset gone from feed", metadata: [
                    "event": "remove", "key": .string(key.rawValue), "bytes": .stringConvertible(bytes),
                ])
            } catch {
                outcome.lastError = String(describing: error)
                logger.warning("cannot remove asset", metadata: [
                    "event": "remove", "key": .string(key.rawValue), "error": .string(String(describing: error)),
                ])
            }
        }
        return outcome
    }
}
