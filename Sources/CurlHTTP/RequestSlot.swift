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
///
/// A request of a ``TransferBatch`` has no continuation of its own: its slot hands the result to the batch,
/// which collects the results of all its requests for the one task that waits for them.
final class RequestSlot: Sendable {
    /// The continuation type every request awaits.
    typealias Continuation = CheckedContinuation<HTTPResponse, any Error>

    private enum State {
        /// `get` has not installed its continuation yet.
        case created
        /// The task is suspended, waiting for the result.
        case waiting(Continuation)
        /// The result goes to a batch, as its request number `index`.
        case delivering(TransferBatch, index: Int)
        /// Cancellation came before the continuation; `install` must fail fast.
        case cancelledBeforeInstall
        /// The continuation has been resumed (or never will be needed).
        case finished
    }

    private let state: Mutex<State>

    /// A slot for a task that installs its continuation (`install(_:)`).
    init() {
        state = Mutex(.created)
    }

    /// A slot whose result goes to `batch` as its request number `index`.
    init(deliveringTo batch: TransferBatch, index: Int) {
        state = Mutex(.delivering(batch, index: index))
    }

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
            case .waiting, .delivering:
                preconditionFailure("RequestSlot.install called twice, or on a batch's slot")
            }
        }
        if cancelledFirst { continuation.resume(throwing: CancellationError()) }
        return !cancelledFirst
    }

    /// Resumes the waiting task with `result`, if nobody has yet. Returns whether this call did it.
    @discardableResult
    func finish(_ result: Result<HTTPResponse, any Error>) -> Bool {
        enum Receiver {
            case task(Continuation)
            case batch(TransferBatch, Int)
        }
        let receiver = state.withLock { state -> Receiver? in
            switch state {
            case .waiting(let continuation):
                state = .finished
                return .task(continuation)
            case .delivering(let batch, let index):
                state = .finished
                return .batch(batch, index)
            case .created:
                // Only cancellation can finish a request before it was installed.
                state = .cancelledBeforeInstall
                return nil
            case .cancelledBeforeInstall, .finished:
                return nil
            }
        }
        guard let receiver else { return false }
        switch receiver {
        case .task(let continuation): continuation.resume(with: result)
        case .batch(let batch, let index): batch.deliver(result, of: index)
        }
        return true
    }

    /// Whether the task has already been answered (or cancelled): the loop skips such requests.
    var isFinished: Bool {
        state.withLock { state in
            switch state {
            case .created, .waiting, .delivering: false
            case .cancelledBeforeInstall, .finished: true
            }
        }
    }
}
