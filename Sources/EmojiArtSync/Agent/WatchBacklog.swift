import Synchronization

/// Watcher events waiting until DIR has been quiet for a moment before the agent acts on them.
///
/// `rm -rf DIR` first deletes the files in DIR one by one, then the state directory, then DIR: an agent that
/// repaired each deleted file at once would put files back into a folder being removed (and make `rm` fail with
/// "Directory not empty"). So events are held until no new one has come for ``quietPeriod`` (or for at most
/// ``longestHold`` after the first, so a file written without pause cannot hold repairs back forever); by then
/// a removal of the whole folder has reached the state directory, which the agent checks before any repair.
/// Events that say the folder itself is gone are handed over at once.
final class WatchBacklog: Sendable {
    /// How long DIR must be quiet: `rm` takes microseconds per file, so this spans the gap between the last
    /// file in DIR and the state directory; a repair waits this much longer than it would have.
    static let quietPeriod = Duration.milliseconds(50)
    /// The longest an event is held while more keep coming.
    static let longestHold = Duration.seconds(5)

    /// What ``take()`` gives.
    enum Taken {
        /// Events to act on; `ended`: the watch is over (the stream finished) and nothing more will come.
        case events([WatchEvent], ended: Bool)
        /// Nothing to act on before this moment (nil: until something arrives); sleep on ``alarm``.
        case wait(until: ContinuousClock.Instant?)
    }

    private struct State {
        var events: [WatchEvent] = []
        var first: ContinuousClock.Instant?
        var last: ContinuousClock.Instant?
        var ended = false
        var urgent = false
    }

    private let state = Mutex(State())
    /// Rung when events arrive or the watch ends.
    let alarm = Alarm()

    /// Adds a batch read from the watcher.
    func add(_ batch: [WatchEvent]) {
        let now = ContinuousClock.now
        state.withLock { state in
            state.events += batch
            state.first = state.first ?? now
            state.last = now
            state.urgent = state.urgent || batch.contains { $0.endsWatch || Self.touchesStateDirectory($0) }
        }
        alarm.ring()
    }

    /// The watcher's stream finished.
    func end() {
        state.withLock { $0.ended = true }
        alarm.ring()
    }

    /// The events whose quiet period is over, or how long to wait for them.
    func take() -> Taken {
        let now = ContinuousClock.now
        return state.withLock { state in
            if let first = state.first, let last = state.last, !state.ended && !state.urgent {
                let due = min(last.advanced(by: Self.quietPeriod), first.advanced(by: Self.longestHold))
                if now < due { return .wait(until: due) }
            }
            guard !state.events.isEmpty || state.ended else { return .wait(until: nil) }
            // An explicit swap: `defer { state = State(ended: state.ended) }` after `return .events(state.events, ...)`
            // crashed release builds (Swift 6.3.1) with a null retain here, the events freed before they were returned.
            let taken = Taken.events(state.events, ended: state.ended)
            state.events = []
            state.first = nil
            state.last = nil
            state.urgent = false
            return taken
        }
    }

    /// The state directory (`DIR/.emojiart-sync`) was deleted or renamed: DIR is being removed or moved.
    static func touchesStateDirectory(_ event: WatchEvent) -> Bool {
        event.name == SyncDirectory.stateDirectoryName && !event.mask.isDisjoint(with: [.delete, .movedFrom])
    }
}
