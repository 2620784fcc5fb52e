/// Counters describing what a ``CurlHTTPClient`` has done since it was created.
///
/// Meant for logs and tests: `connectionsOpened` much smaller than `requestsStarted` is the
/// proof that keep-alive reuses connections. All counters only grow, except
/// ``activeTransfers``, which is the current number of transfers on the multi handle.
public struct HTTPClientStatistics: Sendable, Equatable, CustomStringConvertible {
    /// Transfers handed to libcurl (requests that were queued and then cancelled before they
    /// started, or refused before any I/O, are not counted).
    public var requestsStarted = 0
    /// Transfers that ended with an HTTP response, whatever its status.
    public var requestsSucceeded = 0
    /// Transfers that ended with an error (timeout, refused, too large, ...), not counting cancellations.
    public var requestsFailed = 0
    /// Transfers removed from libcurl before they finished, by task cancellation or shutdown.
    public var requestsCancelled = 0
    /// Body bytes received by all transfers, including those that failed or were cancelled
    /// part-way (counted after content decoding).
    public var bytesReceived = 0
    /// New connections libcurl had to open: the sum of `CURLINFO_NUM_CONNECTS` over finished
    /// transfers. A transfer served on a reused connection adds 0.
    public var connectionsOpened = 0
    /// Transfers on the multi handle right now.
    public var activeTransfers = 0
    /// The largest value ``activeTransfers`` has had; never above `maxConcurrentRequests`.
    public var peakActiveTransfers = 0
    /// libcurl easy handles made (`curl_easy_init`): the loop keeps a finished transfer's handle for the next
    /// request, so this stays at most `maxConcurrentRequests` however many requests run, unless a handle is dropped
    /// (a failed transfer's handle is kept too; a cancelled one's, a paused one's, or one whose options libcurl
    /// refused is not).
    public var easyHandlesMade = 0
    /// Requests the loop holds in its queue, waiting for room (cancelled ones included until it reaches them).
    public var queuedRequests = 0

    /// Creates zeroed statistics.
    public init() {}

    /// Transfers that have ended one way or another.
    public var requestsCompleted: Int { requestsSucceeded + requestsFailed + requestsCancelled }

    /// A logfmt fragment, such as `started=3 succeeded=3 failed=0 ...`.
    public var description: String {
        "started=\(requestsStarted) succeeded=\(requestsSucceeded) failed=\(requestsFailed) "
            + "cancelled=\(requestsCancelled) bytes=\(bytesReceived) connections=\(connectionsOpened) "
            + "active=\(activeTransfers) peak_active=\(peakActiveTransfers)"
    }
}
