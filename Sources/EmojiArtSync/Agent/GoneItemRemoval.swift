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

    /// What the guard decides for the files of `gone` (owned keys that are not in the feed, `FeedSweep.gone`);
    /// `feedIsEmpty`: the feed lists nothing, which never deletes anything. A dry run shows the plan, a real run
    /// carries it out (`run(_:)`).
    enum Plan: Sendable {
        case remove([AssetKey])
        /// Nothing is deleted: the keys it would have taken and why not.
        case refuse([AssetKey], reason: String, ownedCount: Int)
    }

    func plan(gone: [AssetKey], feedIsEmpty: Bool) -> Plan {
        guard !gone.isEmpty else { return .remove([]) }
        let ownedCount = owned.count
        let percent = ownedCount == 0 ? 0 : gone.count * 100 / ownedCount
        guard feedIsEmpty || percent > maxDeletePercent else { return .remove(gone) }
        let why = feedIsEmpty ? "the feed is empty" : "\(percent)% > --max-delete \(maxDeletePercent)%"
        return .refuse(gone, reason: why, ownedCount: ownedCount)
    }

    /// Carries out `plan`: a refusal is logged and says how to confirm; each file is removed only if it is still
    /// the agent's as it left it.
    func run(_ plan: Plan) async -> Outcome {
        var outcome = Outcome()
        let gone: [AssetKey]
        switch plan {
        case .refuse(let keys, let why, let ownedCount):
            outcome.refusal = "refusing to delete \(keys.count) of \(ownedCount) files (\(why)); nothing deleted. If the gallery really dropped them, allow it with --max-delete 100"
            logger.warning("mass deletion refused", metadata: [
                "event": "delete_guard", "would_delete": .stringConvertible(keys.count), "owned": .stringConvertible(ownedCount),
                "reason": .string(why), "hint": "allow it with --max-delete 100",
            ])
            return outcome
        case .remove(let keys):
            gone = keys
        }
        for page in OwnedFiles.pages(of: gone) {
            for (key, result) in zip(page, await owned.remove(page, keepingRowsOfDamagedFiles: false)) {
                switch result {
                case .success(let removal):
                    outcome.removed += 1
                    logger.info("removed asset gone from feed", metadata: [
                        "event": "remove", "key": .string(key.rawValue), "bytes": .stringConvertible(removal.bytes),
                    ])
                case .failure(let error):
                    outcome.lastError = String(describing: error)
                    logger.warning("cannot remove asset", metadata: [
                        "event": "remove", "key": .string(key.rawValue), "error": .string(String(describing: error)),
                    ])
                }
            }
        }
        return outcome
    }
}
