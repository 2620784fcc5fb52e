/// Where a `200` response's body goes as it arrives, instead of into ``HTTPResponse/body``: a file, say, so
/// that memory per transfer is a buffer, not the body (``CurlHTTPClient/get(_:headers:maxBodySize:priority:bodySink:)``).
///
/// ``write(_:)`` is called on the client's loop thread, one chunk at a time, in order, and must not block for
/// long (a write to the page cache is fine; a network call is not). Returning `false` aborts the transfer with
/// ``HTTPClientError/Kind/transport`` and ``failureDescription`` in its message. Only the body of a `200` is
/// written here; any other status keeps up to ``HTTPBodySinkLimits/otherStatusBodyLimit`` bytes in
/// ``HTTPResponse/body`` for the caller's message, and counts the rest against the body limit without keeping it.
public protocol HTTPBodySink: AnyObject, Sendable {
    /// Takes the next bytes of the body; `false` stops the transfer.
    func write(_ chunk: UnsafeRawBufferPointer) -> Bool
    /// Why the last ``write(_:)`` returned `false` (`No space left on device`), for the error message.
    var failureDescription: String { get }
}

/// Limits that go with an ``HTTPBodySink``.
public enum HTTPBodySinkLimits {
    /// What a response other than `200` keeps of its body when a sink was given: enough for an error message.
    public static let otherStatusBodyLimit = 64 * 1024
}
