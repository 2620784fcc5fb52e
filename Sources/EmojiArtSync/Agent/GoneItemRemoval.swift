import Logging

/// Removes the agent's own files of items that left the feed, behind the mass-deletion guard (`--max-delete`),
/// as `rclone sync` deletes behind `--max-delete`.
///
/// A feed that is empty, or that would delete more than `maxDeletePercent` of the agent's files, deletes
/// nothing and says why: a gallery that lost its database should not empty the user's folder. Only files the
/// index records are considered, and each is removed only if its bytes are still what the agent wrote.
@SyncActor
struct GoneItemRemoval {
    let owned: OwnedFiles
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

    /// Removes the files of `gone` (owned keys that are not in the feed, `FeedSweep.gone`); `feedIsEmpty`: the
    /// feed lists nothing, which never deletes anything.
    func run(gone: [AssetKey], feedIsEmpty: Bool) async -> Outcome {
        var outcome = Outcome()
        guard !gone.isEmpty else { return outcome }
        let ownedCount = owned.count
        let percent = ownedCount == 0 ? 0 : gone.count * 100 / ownedCount
        if feedIsEmpty || percent > maxDeletePercent {
            let why = feedIsEmpty ? "the feed is empty" : "\(percent)% > --max-delete \(maxDeletePercent)%"
            outcome.refusal = "refusing to delete \(gone.count) of \(ownedCount) files (\(why)); nothing deleted. If the gallery really dropped them, allow it with --max-delete 100"
            logger.warning("mass deletion refused", metadata: [
                "event": "delete_guard", "would_delete": .stringConvertible(gone.count), "owned": .stringConvertible(ownedCount),
                "reason": .string(why), "hint": "allow it with --max-delete 100",
            ])
            return outcome
        }
        for key in gone {
            do {
                let bytes = try await owned.remove(key)
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
