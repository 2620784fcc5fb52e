import Synchronization

/// What a `--once` pass's accesses came to, counted as they finish: hits by layer, the keys that succeeded, the
/// first failure of each key that did not, and the progress line's figures.
///
/// The pass runs on the cooperative pool (`FeedPass`), its jobs finish on any thread, so the tally guards its
/// state with a `Mutex` instead of asking the silo to collect every outcome.
final class OnceTally: Sendable {
    struct State {
        var hits: [Hit: Int] = [:]
        var succeeded = Set<AssetKey>()
        var failureReasons: [AssetKey: String] = [:]
        var progress: SyncProgress
    }

    private let state: Mutex<State>

    init(total: Int) {
        state = Mutex(State(progress: SyncProgress(done: 0, total: total, bytes: 0)))
    }

    /// Counts one access; returns the progress to show when it changed (each key counts once: done at its first
    /// outcome, failed until an access of it succeeds).
    func note(_ outcome: FeedPass.Outcome) -> SyncProgress? {
        state.withLock { state in
            var changed = false
            if !state.succeeded.contains(outcome.key) {
                let first = state.failureReasons[outcome.key] == nil
                if first { state.progress.done += 1 }
                if outcome.hit != nil {
                    state.progress.bytes += outcome.bytes
                    if !first { state.progress.failed -= 1 }
                    changed = true
                } else if first {
                    state.progress.failed += 1
                    changed = true
                }
            }
            if let hit = outcome.hit {
                state.hits[hit, default: 0] += 1
                state.succeeded.insert(outcome.key)
            } else if state.failureReasons[outcome.key] == nil {
                state.failureReasons[outcome.key] = outcome.failure.map { String(describing: $0) } ?? "failed"
            }
            return changed ? state.progress : nil
        }
    }

    /// The tally so far.
    var current: State { state.withLock { $0 } }
}
