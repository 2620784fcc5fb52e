import Synchronization

/// What a `--once` pass's accesses came to, counted as they finish: hits by layer, the keys that succeeded, the
/// first failure of each key that did not, and the progress line's figures.
///
/// The pass runs on the cooperative pool (`FeedPass`), its jobs finish on any thread, so the tally guards its
/// state with a `Mutex` instead of asking the silo to collect every outcome. Keys are counted by their position
/// in the feed: a flag a key, no hashing for each of the feed's listings.
final class OnceTally: Sendable {
    struct State {
        var hits: [Hit: Int] = [:]
        /// Per position: 0 not accessed yet, 1 succeeded, 2 failed so far.
        fileprivate var outcomes: [UInt8]
        /// The first failure of each position that failed (nil: the access failed without an error to show);
        /// formatted only if shown (`SyncReport.Failure.reason`).
        var firstFailures: [Int32: (any Error)?] = [:]
        var progress: SyncProgress

        /// Whether an access of the key at `position` succeeded.
        func succeeded(_ position: Int) -> Bool { outcomes[position] == Self.succeeded }

        fileprivate static let notAccessed: UInt8 = 0, succeeded: UInt8 = 1, failed: UInt8 = 2
    }

    private let state: Mutex<State>

    /// A tally of a feed of `total` distinct keys.
    init(total: Int) {
        state = Mutex(State(
            outcomes: Array(repeating: State.notAccessed, count: total), progress: SyncProgress(done: 0, total: total, bytes: 0)))
    }

    /// Counts one access; returns the progress to show when it changed (each key counts once: done at its first
    /// outcome, failed until an access of it succeeds).
    func note(_ outcome: FeedPass.Outcome) -> SyncProgress? {
        let position = Int(outcome.position)
        return state.withLock { state in
            var changed = false
            let before = state.outcomes[position]
            if before != State.succeeded {
                if before == State.notAccessed { state.progress.done += 1 }
                if outcome.hit != nil {
                    state.progress.bytes += outcome.bytes
                    if before == State.failed { state.progress.failed -= 1 }
                    changed = true
                } else if before == State.notAccessed {
                    state.progress.failed += 1
                    changed = true
                }
            }
            if let hit = outcome.hit {
                state.hits[hit, default: 0] += 1
                state.outcomes[position] = State.succeeded
            } else if before == State.notAccessed {
                state.outcomes[position] = State.failed
                state.firstFailures[outcome.position] = .some(outcome.failure.map(Self.shown))
            }
            return changed ? state.progress : nil
        }
    }

    /// What the report says of a failure. A listing refused because this run's own attempt at its key failed
    /// (`ImageLoader.RememberedFailure`: a run of `--once` remembers nothing from an earlier one) is reported as
    /// that failure: which listing of a key is noted first depends on which of its batches finished first, and
    /// "failed 1x; next attempt in 3490s" is no reason once the run has ended.
    private static func shown(_ failure: any Error) -> any Error {
        (failure as? ImageLoader.RememberedFailure)?.underlying ?? failure
    }

    /// The tally so far.
    var current: State { state.withLock { $0 } }
}
