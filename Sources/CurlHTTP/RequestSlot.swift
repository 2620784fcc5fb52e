import Synchronization

/// Where one request's result meets the task awaiting it: guarantees its continuation is
/// resumed exactly once.
///
/// Three parties race to finish a request: the loop thread (response or error), the task's
/// cancellation handler, and shutdown. Each goes through ``finish(_:)``; whoever finds the
/// continuation takes it out of the slot under the lock and resumes it outside the lock, so
/// every later attempt finds nothing and does nothing.
///
/// Cancellation may also arrive *before* the continuation exists (the task was cancelled
/// while `get` was still setting up); the slot remembers that and ``install(_:)`` then
/// resumes the new continuation with `CancellationError` at once.
final class RequestSlot: Sendable {
    /// The continuation type every request awaits.
    typealias Continuation = CheckedContinuation<HTTPResponse, any Error>

    private enum State {
        /// `get` has not installed its continuation yet.
        case created
        /// The task is suspended, waiting for the result.
        case waiting(Continuation)
        /// Cancellation came before the continuation; `install` must fail fast.
        case cancelledBeforeInstall
        /// The continuation has been resumed (or never will be needed).
        case finished
    }

    private let state = Mutex<State>(.created)

    /// Installs the waiting task's continuation. Returns `false`, after resuming it with
    /// `CancellationError`, if the task was cancelled first; the request must then not be sent.
    func install(_ continuation: Continuation) -> Bool {
        let cancelledFirst = state.withLock { state -> Bool in
            switch state {
            case .created:
                state = .waiting(continuation)
                return false
            case .cancelledBeforeInstall, .finished:
                state = .finished
                return true
            case .waiting:
                preconditionFailure("RequestSlot.install called twice")
            }
        }
        if cancelledFirst { continuation.resume(throwing: CancellationError()) }
        return !cancelledFirst
    }

    /// Resumes the waiting task with `result`, if nobody has yet. Returns whether this call did it.
    @discardableResult
    func finish(_ result: Result<HTTPResponse, any Error>) -> Bool {
        let continuation = state.withLock { state -> Continuation? in
            switch state {
            case .waiting(let continuation):
                state = .finished
                return continuation
            case .created:
                // Only cancellation can finish a request before it was installed.
                state = .cancelledBeforeInstall
                return nil
            case .cancelledBeforeInstall, .finished:
                return nil
            }
        }
        continuation?.resume(with: result)
        return continuation != nil
    }

    /// Whether the task has already been answered (or cancelled): the loop skips such requests.
    var isFinished: Bool {
        state.withLock { state in
            switch state {
            case .created, .waiting: false
            case .cancelledBeforeInstall, .finished: true
            }
        }
    }
}
