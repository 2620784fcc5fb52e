import CCurl
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The event loop that owns the libcurl multi handle (`CURLM *`) and every transfer on it.
///
/// Runs on one dedicated thread (``CurlHTTPClient`` starts it) and touches its state from that
/// thread only, which is why it is not `Sendable`: the multi handle, the easy handles, the
/// table of active transfers and the queues of waiting requests all belong to it. The outside
/// world talks to it only through the ``CurlLoopMailbox``.
///
/// One turn of the loop: take new requests and cancellations from the mailbox, drop cancelled
/// transfers, start waiting requests up to `maxConcurrentRequests`, let libcurl do I/O
/// (`curl_multi_perform`), hand finished transfers to their tasks (`curl_multi_info_read`),
/// then sleep in `curl_multi_poll` until a socket is ready, a libcurl timer is due, or the
/// mailbox wakes it.
///
/// Invariants: a transfer is in ``active`` exactly while its easy handle is on the multi
/// handle; ``active`` never has more than `maxConcurrentRequests` entries; every request
/// taken from the mailbox ends with its slot finished, whatever happens.
final class CurlMultiLoop {
    private let multi: UnsafeMutableRawPointer
    private let mailbox: CurlLoopMailbox
    private let configuration: HTTPClientConfiguration
    /// Transfers on the multi handle, by request id.
    private var active: [UInt64: CurlTransfer] = [:]
    /// Requests waiting for a free transfer slot: urgent ones first, each kind oldest first.
    private var waiting = WaitingRequests()
    /// The receive budget every transfer shares (`maxReceiveBytesPerSecond`), nil for no limit.
    private let budget: ReceiveBudget?
    /// Easy handles between transfers, kept for the next request.
    private let handles: EasyHandleShelf

    /// The longest `curl_multi_poll` sleeps when neither sockets, timers nor the mailbox call.
    /// Only a safety net: every mailbox write wakes the loop at once.
    private static let idlePollMilliseconds: Int32 = 1000

    /// Takes ownership of `multi`; from now on only this loop (and its thread) may use it.
    init(multi: UnsafeMutableRawPointer, mailbox: CurlLoopMailbox, configuration: HTTPClientConfiguration) {
        self.multi = multi
        self.mailbox = mailbox
        self.configuration = configuration
        let budget = configuration.maxReceiveBytesPerSecond.map { ReceiveBudget(bytesPerSecond: $0) }
        self.budget = budget
        self.handles = EasyHandleShelf(configuration: configuration, budget: budget)
    }

    /// Runs until the mailbox says stop, then fails whatever is left and removes and cleans up
    /// every easy handle; the multi handle goes when the loop does (`deinit`).
    func run() {
        while true {
            let work = mailbox.takeWork()
            enqueue(work.requests)
            for id in work.cancellations {
                cancelTransfer(id: id)
            }
            if work.stopping { break }
            resumeTransfersPausedForBudget()
            startWaitingTransfers()

            var running: Int32 = 0
            let performCode = curl_multi_perform(multi, &running)
            if performCode != CURLM_OK {
                failAllActive(.multi("curl_multi_perform", performCode))
            }
            collectFinishedTransfers()
            if hasStartableWork { continue }

            let pollCode = curl_multi_poll(multi, nil, 0, pollMilliseconds, nil)
            if pollCode != CURLM_OK {
                failAllActive(.multi("curl_multi_poll", pollCode))
                // Do not spin if the handle is broken; the next mailbox message still gets through.
                usleep(10_000)
            }
        }
        shutDown()
    }

    // MARK: - Bandwidth limit

    /// Resumes the transfers the budget paused, once it has tokens again. libcurl may hand a resumed transfer's
    /// kept chunk to its write callback inside `curl_easy_pause`, which may pause it again.
    private func resumeTransfersPausedForBudget() {
        guard let budget, !budget.paused.isEmpty, budget.hasTokens() else { return }
        for id in budget.takePaused() {
            guard let transfer = active[id] else { continue }  // cancelled or failed while paused
            _ = curl_easy_pause(transfer.easy, emojiart_curlpause_cont())
        }
    }

    /// How long `curl_multi_poll` may sleep: the idle safety net, or until the budget has tokens again for the
    /// transfers it paused (paused sockets are not watched, so nothing else would wake the loop for them).
    private var pollMilliseconds: Int32 {
        guard let budget, !budget.paused.isEmpty else { return Self.idlePollMilliseconds }
        return max(1, min(Self.idlePollMilliseconds, budget.millisecondsUntilTokens()))
    }

    // MARK: - Queue

    private func enqueue(_ requests: [CurlLoopMailbox.Request]) {
        guard !requests.isEmpty else { return }
        for request in requests { waiting.append(request) }
        publishQueued()
    }

    private func publishQueued() {
        let queued = waiting.count
        mailbox.statistics.withLock { $0.queuedRequests = queued }
    }

    private var hasStartableWork: Bool {
        !waiting.isEmpty && active.count < configuration.maxConcurrentRequests
    }

    /// Starts queued requests while there is room, urgent ones first, each kind in FIFO order; requests
    /// already answered (cancelled while they waited) are dropped without any I/O.
    private func startWaitingTransfers() {
        while hasStartableWork, let request = waiting.popFirst() {
            if request.slot.isFinished { continue }
            start(request)
        }
        publishQueued()
    }

    private func start(_ request: CurlLoopMailbox.Request) {
        let transfer: CurlTransfer
        do {
            let handle = try handles.take(for: request.url.string)
            transfer = try CurlTransfer(request: request, handle: handle, configuration: configuration, budget: budget)
        } catch {
            // A handle whose options libcurl refused is not kept: it goes with the error.
            request.slot.finish(.failure(error))
            return
        }
        let code = curl_multi_add_handle(multi, transfer.easy)
        guard code == CURLM_OK else {
            request.slot.finish(.failure(HTTPClientError.multi("curl_multi_add_handle", code, url: request.url.string)))
            return
        }
        active[request.id] = transfer
        let handlesMade = handles.handlesMade
        mailbox.statistics.withLock { statistics in
            statistics.easyHandlesMade = handlesMade
            statistics.requestsStarted += 1
            statistics.activeTransfers = active.count
            statistics.peakActiveTransfers = max(statistics.peakActiveTransfers, active.count)
        }
    }

    // MARK: - Finishing

    /// Reads `CURLMSG_DONE` messages and answers each finished transfer's task.
    private func collectFinishedTransfers() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            // Copy what we need first: removing the handle invalidates the message.
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            guard let transfer = CurlTransfer.owning(easy), active[transfer.request.id] === transfer else {
                continue
            }
            remove(transfer)
            let outcome = transfer.outcome(code)
            record(transfer, succeeded: (try? outcome.get()) != nil)
            transfer.request.slot.finish(outcome.mapError { $0 })
            // Only a transfer libcurl finished and never paused leaves its handle as a new one's would be.
            if !transfer.wasPaused { handles.putBack(transfer.handle) }
        }
    }

    /// Drops the transfer of a cancelled task; its slot was already answered by the task's
    /// cancellation handler. Requests still waiting are skipped when their turn comes.
    private func cancelTransfer(id: UInt64) {
        guard let transfer = active[id] else { return }
        remove(transfer)
        recordCancelled(transfer)
        transfer.request.slot.finish(.failure(CancellationError()))
    }

    /// Fails every active transfer with `error` (the multi handle itself reported a problem).
    private func failAllActive(_ error: HTTPClientError) {
        for transfer in active.values {
            remove(transfer)
            record(transfer, succeeded: false)
            var specific = error
            specific.url = transfer.request.url.string
            transfer.request.slot.finish(.failure(specific))
        }
    }

    /// Takes the easy handle off the multi handle and out of ``active``. Its results can still be read; a finished
    /// transfer's caller then hands it back to the shelf, any other lets it go with the transfer (cleaned up).
    private func remove(_ transfer: CurlTransfer) {
        _ = curl_multi_remove_handle(multi, transfer.easy)
        active[transfer.request.id] = nil
    }

    private func record(_ transfer: CurlTransfer, succeeded: Bool) {
        let connections = transfer.longInfo(CURLINFO_NUM_CONNECTS)
        mailbox.statistics.withLock { statistics in
            if succeeded { statistics.requestsSucceeded += 1 } else { statistics.requestsFailed += 1 }
            statistics.bytesReceived += transfer.receivedBodyBytes
            statistics.connectionsOpened += connections
            statistics.activeTransfers = active.count
        }
    }

    private func recordCancelled(_ transfer: CurlTransfer) {
        let connections = transfer.longInfo(CURLINFO_NUM_CONNECTS)
        mailbox.statistics.withLock { statistics in
            statistics.requestsCancelled += 1
            statistics.bytesReceived += transfer.receivedBodyBytes
            statistics.connectionsOpened += connections
            statistics.activeTransfers = active.count
        }
    }

    // MARK: - Shutdown

    /// Fails every request this loop knows of and releases every easy handle (`deinit` then releases the
    /// multi handle).
    private func shutDown() {
        // Requests that reached the mailbox after the last turn are in the final `takeWork`.
        enqueue(mailbox.takeWork().requests)
        for transfer in active.values {
            remove(transfer)
            recordCancelled(transfer)
            transfer.request.slot.finish(.failure(HTTPClientError.shutDown(url: transfer.request.url.string)))
        }
        for request in waiting.removeAll() {
            request.slot.finish(.failure(HTTPClientError.shutDown(url: request.url.string)))
        }
        mailbox.markStopped()
    }

    /// The multi handle goes with its owner: after ``run()`` (on the loop thread, as the thread lets go of the
    /// loop) or, if the thread never started, wherever the loop was dropped.
    deinit {
        curl_multi_cleanup(multi)
    }
}

@available(*, unavailable, message: "The loop and its handles are confined to the loop thread")
extension CurlMultiLoop: Sendable {}
