import Synchronization

/// A coalescing wake-up for one sleeper: `ring()` from anywhere, any number of times; `sleep(until:)` returns
/// at its deadline or at the first ring, whichever comes first.
///
/// A ring while nobody sleeps is remembered (once: rings coalesce), so a request made while the sleeper is
/// busy makes its next `sleep` return at once: "do it now" is never lost. This is how the agent's loops sleep
/// until their next deadline or an event instead of ticking at a fixed rate.
final class Alarm: Sendable {
    private struct State {
        var rung = false
        var sleeper: CheckedContinuation<Void, Never>?
        var timer: Task<Void, Never>?
        var generation: UInt64 = 0
    }

    private let state = Mutex(State())

    init() {}

    /// Wakes the sleeper, or the next one if nobody sleeps now.
    func ring() {
        let (sleeper, timer) = state.withLock { state -> (CheckedContinuation<Void, Never>?, Task<Void, Never>?) in
            guard let sleeper = state.sleeper else {
                state.rung = true
                return (nil, nil)
            }
            state.sleeper = nil
            defer { state.timer = nil }
            return (sleeper, state.timer)
        }
        timer?.cancel()
        sleeper?.resume()
    }

    /// Returns at `deadline` (never, when nil), at a ring, or when the task is cancelled. A ring that came
    /// while nobody slept makes it return at once. One sleeper at a time.
    func sleep(until deadline: ContinuousClock.Instant?) async {
        if let deadline, deadline <= .now { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.rung {
                        state.rung = false
                        return true
                    }
                    state.sleeper = continuation
                    state.generation &+= 1
                    if let deadline {
                        let generation = state.generation
                        state.timer = Task { [self] in
                            try? await Task.sleep(until: deadline, clock: .continuous)
                            if !Task.isCancelled { expire(generation) }
                        }
                    }
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            ring()
        }
        state.withLock { $0.rung = $0.rung && !Task.isCancelled }
    }

    /// The deadline of sleep number `generation` passed: wake it, unless a ring already did.
    private func expire(_ generation: UInt64) {
        let sleeper = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.generation == generation, let sleeper = state.sleeper else { return nil }
            state.sleeper = nil
            state.timer = nil
            return sleeper
        }
        sleeper?.resume()
    }
}
