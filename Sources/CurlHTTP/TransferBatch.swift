import Synchronization

/// Requests submitted together (``CurlHTTPClient/submit(_:)``) whose results are collected together: the task
/// that submitted them waits once for whatever has finished since it last looked (``next()``), instead of once
/// per request with a continuation, a cancellation handler and a thread woken for each.
///
/// What it owns: the results that finished and were not handed out yet, how many are still to come, and the one
/// waiting task's continuation. The loop thread delivers each result through its request's `RequestSlot`; the
/// task takes them. Redirects are not followed: a `3xx` is a result like any other, for the caller to ask again
/// with ``CurlHTTPClient/get(_:headers:maxBodySize:priority:bodySink:)``.
public final class TransferBatch: Sendable {
    /// One request of a batch.
    public struct Request: Sendable {
        public let url: String
        public let headers: HTTPHeaders
        public let priority: RequestPriority
        /// Where a `200`'s body goes as it arrives (``HTTPBodySink``); nil: into the response.
        public let bodySink: (any HTTPBodySink)?

        public init(
            url: String, headers: HTTPHeaders = HTTPHeaders(), priority: RequestPriority = .normal,
            bodySink: (any HTTPBodySink)? = nil
        ) {
            self.url = url
            self.headers = headers
            self.priority = priority
            self.bodySink = bodySink
        }
    }

    /// A finished request: its position in the submitted array and what it came to (the response, whatever its
    /// status, or the ``HTTPClientError`` of a failed transfer, or `CancellationError`).
    public typealias Finished = (index: Int, result: Result<HTTPResponse, any Error>)

    private struct State {
        var finished: [Finished] = []
        var pending: Int
        var waiter: CheckedContinuation<[Finished], Never>?
    }

    private let state: Mutex<State>
    private let mailbox: CurlLoopMailbox
    /// The requests' slots and ids, set once by the client before any is submitted.
    private let requests: Mutex<[(id: UInt64, slot: RequestSlot)]> = Mutex([])

    /// The number of requests.
    public let count: Int

    init(count: Int, mailbox: CurlLoopMailbox) {
        self.count = count
        self.mailbox = mailbox
        state = Mutex(State(pending: count))
    }

    /// Records the slot of each request (the client, before submitting them).
    func track(_ slots: [(id: UInt64, slot: RequestSlot)]) {
        requests.withLock { $0 = slots }
    }

    /// The requests finished since the last call, in the order they finished; waits while none has and some are
    /// still running. Empty once every result was handed out. Cancelling the waiting task cancels the batch
    /// (``cancel()``): every request not finished then ends with `CancellationError`.
    public func next() async -> [Finished] {
        if let ready = takeReady() { return ready }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> [Finished]? in
                    if !state.finished.isEmpty || state.pending == 0 {
                        defer { state.finished = [] }
                        return state.finished
                    }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// What has finished, or `[]` when nothing is left to come; nil when the caller must wait.
    private func takeReady() -> [Finished]? {
        state.withLock { state in
            guard !state.finished.isEmpty || state.pending == 0 else { return nil }
            defer { state.finished = [] }
            return state.finished
        }
    }

    /// Ends every request that has not finished with `CancellationError` and drops its transfer. Idempotent.
    public func cancel() {
        let slots = requests.withLock { $0 }
        var running: [UInt64] = []
        for (id, slot) in slots where slot.finish(.failure(CancellationError())) { running.append(id) }
        mailbox.cancel(ids: running)
    }

    /// A request's result (its slot, on whichever thread finished it): kept, and the waiting task resumed with
    /// everything finished so far.
    func deliver(_ result: Result<HTTPResponse, any Error>, of index: Int) {
        let resume = state.withLock { state -> (CheckedContinuation<[Finished], Never>, [Finished])? in
            state.finished.append((index, result))
            state.pending -= 1
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            defer { state.finished = [] }
            return (waiter, state.finished)
        }
        if let (waiter, finished) = resume { waiter.resume(returning: finished) }
    }
}
