import Synchronization

/// Everything the loop thread and the rest of the world share: the queue of new requests, the
/// queue of cancellations, the stop flag and the statistics, each behind a `Mutex`.
///
/// The loop thread is the only reader of the queues (``takeWork()``); any thread may write to
/// them. Every write that gives the loop something to do also wakes it from `curl_multi_poll`
/// with `curl_multi_wakeup`, under the same lock, so the wakeup can never reach a multi handle
/// that ``markStopped()`` has already let go of.
final class CurlLoopMailbox: Sendable {
    /// A request on its way to the loop thread.
    struct Request: Sendable {
        /// The client-wide number of the request; cancellations name it.
        let id: UInt64
        /// The checked URL.
        let url: CurlURL
        /// Extra request header lines (`CURLOPT_HTTPHEADER`), already checked.
        let headerLines: [String]
        /// This request's body limit, when it differs from the client's `maxBodySize`.
        let maxBodySize: Int?
        /// Which queue it waits in for a transfer slot.
        let priority: RequestPriority
        /// Where the result goes.
        let slot: RequestSlot
        /// Where a `200`'s body goes instead of memory, if anywhere.
        let bodySink: (any HTTPBodySink)?
    }

    /// What the loop found in the mailbox on one turn.
    struct Work: Sendable {
        /// Requests in submission order.
        var requests: [Request]
        /// Ids of requests whose tasks were cancelled.
        var cancellations: [UInt64]
        /// Whether the loop must fail everything and exit.
        var stopping: Bool
    }

    private enum Phase {
        case running, stopping, stopped
    }

    private struct State {
        var phase: Phase = .running
        var wakeup: CurlMultiWakeup?
        var requests: [Request] = []
        var cancellations: [UInt64] = []
        /// A wakeup was sent and the loop has not taken its work since: another one is redundant.
        var wakeupPending = false
    }

    private let state: Mutex<State>

    /// Counters the loop thread updates and ``CurlHTTPClient/statistics`` reads.
    let statistics = Mutex(HTTPClientStatistics())

    /// Creates a running mailbox that wakes the loop through `wakeup`.
    init(wakeup: CurlMultiWakeup) {
        state = Mutex(State(wakeup: wakeup))
    }

    /// Queues `request` for the loop. Returns `false` if the client is shutting down; the caller
    /// must then fail the request itself.
    func submit(_ request: Request) -> Bool {
        state.withLock { state in
            guard state.phase == .running else { return false }
            state.requests.append(request)
            Self.wake(&state)
            return true
        }
    }

    /// Queues `requests` for the loop together: one lock, one wakeup. Returns `false` if the client is shutting
    /// down; the caller must then fail them itself.
    func submit(_ requests: [Request]) -> Bool {
        state.withLock { state in
            guard state.phase == .running else { return false }
            state.requests.append(contentsOf: requests)
            Self.wake(&state)
            return true
        }
    }

    /// Asks the loop to drop the transfers of requests `ids`, where it still has them: one lock, one wakeup.
    func cancel(ids: [UInt64]) {
        guard !ids.isEmpty else { return }
        state.withLock { state in
            guard state.phase == .running else { return }
            state.cancellations.append(contentsOf: ids)
            Self.wake(&state)
        }
    }

    /// Asks the loop to drop the transfer of request `id`, if it still has one.
    func cancel(id: UInt64) {
        state.withLock { state in
            guard state.phase == .running else { return }
            state.cancellations.append(id)
            Self.wake(&state)
        }
    }

    /// Asks the loop to fail every request and exit. Idempotent.
    func requestStop() {
        state.withLock { state in
            guard state.phase == .running else { return }
            state.phase = .stopping
            Self.wake(&state)
        }
    }

    /// Loop thread only: takes everything queued since the last call.
    func takeWork() -> Work {
        state.withLock { state in
            defer {
                state.requests.removeAll(keepingCapacity: true)
                state.cancellations.removeAll(keepingCapacity: true)
                state.wakeupPending = false
            }
            return Work(
                requests: state.requests, cancellations: state.cancellations,
                stopping: state.phase != .running)
        }
    }

    /// Loop thread only, last call before `curl_multi_cleanup`: nobody may wake the handle from now on.
    func markStopped() {
        state.withLock { state in
            state.phase = .stopped
            state.wakeup = nil
        }
    }

    /// Wakes the loop unless a wakeup is already on its way. Called with the lock held.
    private static func wake(_ state: inout State) {
        guard !state.wakeupPending, let wakeup = state.wakeup else { return }
        state.wakeupPending = true
        wakeup.wake()
    }
}
