import CCurl
import POSIXThreads
import Synchronization

/// An async HTTP GET client on one libcurl multi handle, driven by a thread of its own.
///
/// What it owns: one `CURLM` multi handle and the thread that drives it (see
/// ``CurlMultiLoop``). Requests from any task go to that thread through a mailbox; the task
/// suspends on a continuation that the loop resumes when the transfer ends. Requests submitted
/// together (``submit(_:)``) share one: their ``TransferBatch`` hands the task what finished since it last looked. Nothing here blocks
/// Swift's cooperative pool, except ``shutdown()``, which waits briefly for the thread to end.
///
/// Behaviour:
/// - At most `maxConcurrentRequests` transfers run at once; the rest wait in FIFO order, `urgent` ones
///   (`RequestPriority`) before the others.
///   Connections are kept alive and reused through the multi handle's connection cache,
///   capped at the same number: HTTP/1.1, one request per connection at a time, unless `httpVersion`
///   asks for HTTP/2, whose transfers are streams sharing a connection (``HTTPVersion``).
/// - Only `http` and `https`. Redirects are followed on the same host only, at most
///   `maxRedirects` of them (`http` may become `https`, never the reverse); any other `3xx` is
///   returned as a response that says why it was not followed. TLS certificates are verified
///   (libcurl's default, or against `caCertificateFile`; never turned off).
/// - Proxies come from the environment by libcurl's rules (``ProxyEnvironment``), decided here so
///   that a failing proxy is named as the proxy.
/// - Bodies larger than `maxBodySize` fail with ``HTTPClientError/Kind/tooLarge(limit:)``,
///   decided from `Content-Length` before downloading when the server declares one, and while
///   streaming otherwise; memory stays bounded by the limit. A request may hand the body of a `200` to an
///   ``HTTPBodySink`` as it arrives (a file), so that memory per transfer is a buffer, not the body.
/// - With `maxReceiveBytesPerSecond`, all transfers together receive no faster than that (``ReceiveBudget``).
/// - Cancelling the calling task removes the transfer from libcurl and throws
///   `CancellationError` at once (not ``HTTPClientError``; see there).
///
/// Call ``shutdown()`` when done; `deinit` does it too if you forget.
public final class CurlHTTPClient: Sendable {
    /// The configuration in effect, after clamping (see ``HTTPClientConfiguration``).
    public let configuration: HTTPClientConfiguration
    private let mailbox: CurlLoopMailbox
    private let thread: Mutex<JoinableThread?>
    private let nextRequestID = Atomic<UInt64>(1)

    /// The name of each client's loop thread (`/proc/PID/task/*/comm`, `top -H`).
    public static let threadName = "curl-loop"

    /// Creates the multi handle and starts its thread.
    ///
    /// Throws only if libcurl cannot be initialised (`curl_global_init`, `curl_multi_init`,
    /// `curl_multi_setopt`) or the thread cannot be started (`pthread_create`).
    public init(configuration: HTTPClientConfiguration = .init()) throws(HTTPClientError) {
        let configuration = configuration.clamped
        try CurlGlobal.ensureInitialized()
        guard let multi = curl_multi_init() else {
            throw HTTPClientError(
                kind: .transport, url: "", message: "libcurl could not create a multi handle", call: "curl_multi_init")
        }
        do throws(HTTPClientError) {
            let connections = configuration.maxConcurrentRequests
            try Self.setMultiOption(multi, CURLMOPT_MAX_HOST_CONNECTIONS, connections, "CURLMOPT_MAX_HOST_CONNECTIONS")
            try Self.setMultiOption(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, connections, "CURLMOPT_MAX_TOTAL_CONNECTIONS")
            // Idle connections kept for reuse: as many as can be busy at once, no more.
            try Self.setMultiOption(multi, CURLMOPT_MAXCONNECTS, connections, "CURLMOPT_MAXCONNECTS")
        } catch {
            curl_multi_cleanup(multi)
            throw error
        }
        let mailbox = CurlLoopMailbox(wakeup: CurlMultiWakeup(multi))
        let loop = CurlMultiLoop(multi: multi, mailbox: mailbox, configuration: configuration)
        // From here on the loop owns `multi` and cleans it up when it goes, also if the thread does not start.
        let thread: JoinableThread
        do {
            thread = try JoinableThread.start(name: Self.threadName, handing: loop) { $0.run() }
        } catch {
            throw HTTPClientError(
                kind: .transport, url: "", message: "could not start the HTTP client's thread",
                call: "pthread_create", systemErrno: error.code)
        }
        self.configuration = configuration
        self.mailbox = mailbox
        self.thread = Mutex(thread)
    }

    deinit {
        shutdown()
    }

    /// Fetches `url` with GET and returns the response, whatever its status.
    ///
    /// `headers` are sent in addition to libcurl's own (`Host`, `User-Agent`, `Accept`,
    /// `Accept-Encoding`); a field of the same name replaces libcurl's. This is how a caller
    /// makes a conditional request (`If-None-Match`, `If-Modified-Since`): the `304 Not
    /// Modified` that may answer it is returned like any response, with an empty body.
    /// `maxBodySize`, when given, replaces the configuration's limit for this request only
    /// (clamped at 0), so one client can hold a small limit for images and a larger one for a feed.
    ///
    /// Throws ``HTTPClientError`` for transport-level failures only (refused, timed out, too
    /// large, truncated, unsupported URL, malformed header, TLS, shut down, ...), and
    /// `CancellationError` if the calling task is cancelled, in which case the transfer is
    /// abandoned at once.
    /// `bodySink`, when given, receives the body of a `200` as it arrives (``HTTPBodySink``) and the response's
    /// ``HTTPResponse/body`` is empty; the body limit still applies. A redirect's body never reaches it.
    public func get(
        _ url: String, headers: HTTPHeaders = HTTPHeaders(), maxBodySize: Int? = nil, priority: RequestPriority = .normal,
        bodySink: (any HTTPBodySink)? = nil
    ) async throws -> HTTPResponse {
        try Task.checkCancellation()
        // Refuse bad URLs and headers here, before the loop or libcurl's network code sees them.
        var target = try CurlURL(url)
        let lines = try RequestHeaderLines(headers, url: url).lines
        var followed = 0
        while true {
            let response = try await perform(
                target, headerLines: lines, maxBodySize: maxBodySize, priority: priority, bodySink: bodySink)
            guard configuration.maxRedirects > 0, response.isRedirect, let location = response.redirectURL else {
                return response
            }
            let next: CurlURL
            do {
                next = try CurlURL(location)
            } catch {
                return response.refusingRedirect("only http and https are followed")
            }
            if let refusal = RedirectRule.refusal(from: target, to: next) {
                return response.refusingRedirect(refusal)
            }
            guard followed < configuration.maxRedirects else {
                return response.refusingRedirect("more than \(configuration.maxRedirects) redirects")
            }
            followed += 1
            target = next
        }
    }

    /// One request, no redirects followed: queues it on the loop and waits for its outcome.
    private func perform(
        _ url: CurlURL, headerLines: [String], maxBodySize: Int?, priority: RequestPriority, bodySink: (any HTTPBodySink)?
    ) async throws -> HTTPResponse {
        let request = CurlLoopMailbox.Request(
            id: nextRequestID.wrappingAdd(1, ordering: .relaxed).oldValue, url: url, headerLines: headerLines,
            maxBodySize: maxBodySize.map { max(0, $0) }, priority: priority, slot: RequestSlot(), bodySink: bodySink)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard request.slot.install(continuation) else { return }
                if !mailbox.submit(request) {
                    request.slot.finish(.failure(HTTPClientError.shutDown(url: url.string)))
                }
            }
        } onCancel: {
            if request.slot.finish(.failure(CancellationError())) {
                mailbox.cancel(id: request.id)
            }
        }
    }

    /// Starts `requests` together and returns the batch that collects their results (``TransferBatch``): one
    /// submission to the loop for all of them, and one wakeup of the waiting task per handful of results instead
    /// of one per request. Each request waits for a transfer slot as ``get(_:headers:maxBodySize:priority:bodySink:)``'s
    /// does, under the same limits; a redirect is not followed but delivered as the response it is. A URL or
    /// header refused here is delivered at once as its ``HTTPClientError``.
    public func submit(_ requests: [TransferBatch.Request]) -> TransferBatch {
        let batch = TransferBatch(count: requests.count, mailbox: mailbox)
        var queued: [CurlLoopMailbox.Request] = []
        var refused: [(index: Int, error: HTTPClientError)] = []
        queued.reserveCapacity(requests.count)
        for (index, request) in requests.enumerated() {
            do throws(HTTPClientError) {
                let url = try CurlURL(request.url)
                let lines = try RequestHeaderLines(request.headers, url: request.url).lines
                queued.append(CurlLoopMailbox.Request(
                    id: nextRequestID.wrappingAdd(1, ordering: .relaxed).oldValue, url: url, headerLines: lines,
                    maxBodySize: nil, priority: request.priority, slot: RequestSlot(deliveringTo: batch, index: index),
                    bodySink: request.bodySink))
            } catch {
                refused.append((index, error))
            }
        }
        batch.track(queued.map { ($0.id, $0.slot) })
        for (index, error) in refused { batch.deliver(.failure(error), of: index) }
        if !queued.isEmpty, !mailbox.submit(queued) {
            for request in queued { request.slot.finish(.failure(HTTPClientError.shutDown(url: request.url.string))) }
        }
        return batch
    }

    /// Fetches `url` and returns the body, throwing ``HTTPClientError/Kind/httpStatus(_:)``
    /// unless the status is 200 (so a `304`, which has no body, is an error here too).
    ///
    /// A 200 is not proof of good content (the gallery answers missing images with a 200 and a
    /// JSON error): callers still validate the bytes.
    public func fetch(_ url: String) async throws -> [UInt8] {
        let response = try await get(url)
        guard response.status == 200 else {
            throw HTTPClientError.httpStatus(of: response)
        }
        return response.body
    }

    /// A snapshot of the counters.
    public var statistics: HTTPClientStatistics {
        mailbox.statistics.withLock { $0 }
    }

    /// Fails every queued and running request with ``HTTPClientError/Kind/cancelled``, stops the
    /// loop thread and waits for it to end, which closes every connection and frees every
    /// libcurl handle.
    ///
    /// Idempotent and callable from any thread; requests made afterwards fail at once. Blocks
    /// the caller only until the loop has finished its current turn and cleaned up, normally
    /// well under a millisecond. If several threads call it at once, one of them waits for the
    /// thread and the others return immediately.
    public func shutdown() {
        mailbox.requestStop()
        let thread = self.thread.withLock { thread in
            defer { thread = nil }
            return thread
        }
        thread?.join()
    }

    private static func setMultiOption(
        _ multi: UnsafeMutableRawPointer, _ option: CURLMoption, _ value: Int, _ name: String
    ) throws(HTTPClientError) {
        let code = emojiart_curl_multi_setopt_long(multi, option, value)
        guard code == CURLM_OK else { throw .multi("curl_multi_setopt(\(name))", code) }
    }
}
