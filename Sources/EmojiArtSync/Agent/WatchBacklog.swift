import Synchronization

/// Watcher events read from inotify and not yet acted on: the reading task adds a batch per read, and the
/// acting task takes everything that arrived meanwhile at once, so a burst (2,000 files deleted) costs a few
/// rounds of checks, not one per event.
///
/// Events are not held here: the reading task feeds the `RenameGate` first (it counts deletions, and leaves the
/// agent's own renames into DIR out of what is added here), a repair's temporary file and every rename into DIR
/// wait at the gate. Events that say the folder or its state directory is gone stop the agent as soon as they are
/// read.
final class WatchBacklog: Sendable {
    /// What ``take()`` gives.
    enum Taken {
        /// Events to act on; `ended`: the watch is over (the stream finished) and nothing more will come.
        case events([WatchEvent], ended: Bool)
        /// Nothing to act on yet; sleep on ``alarm``.
        case wait
    }

    private struct State {
        var events: [WatchEvent] = []
        var ended = false
    }

    private let state = Mutex(State())
    /// Rung when events arrive or the watch ends.
    let alarm = Alarm()

    /// Adds a batch read from the watcher.
    func add(_ batch: [WatchEvent]) {
        state.withLock { $0.events += batch }
        alarm.ring()
    }

    /// The watcher's stream finished.
    func end() {
        state.withLock { $0.ended = true }
        alarm.ring()
    }

    /// Every event that arrived since the last call, or `.wait`.
    func take() -> Taken {
        state.withLock { state in
            guard !state.events.isEmpty || state.ended else { return .wait }
            // An explicit swap: `defer { state = State(ended: state.ended) }` after `return .events(state.events, ...)`
            // crashed release builds (Swift 6.3.1) with a null retain here, the events freed before they were returned.
            let taken = Taken.events(state.events, ended: state.ended)
            state.events = []
            return taken
        }
    }

    /// The state directory (`DIR/.emojiart-sync`) was deleted or renamed: DIR is being removed or moved.
    static func touchesStateDirectory(_ event: WatchEvent) -> Bool {
        event.name == SyncDirectory.stateDirectoryName && !event.mask.isDisjoint(with: [.delete, .movedFrom])
    }
}
