import HTTPTypes

/// What a handler answers: a status with header fields, a body, and who to tell when it has been written.
public struct HTTPServerResponse: Sendable {
    /// Status and header fields. `Content-Length`, `Transfer-Encoding` and `Connection` are the server's to set.
    public var head: HTTPResponse
    /// The body.
    public var body: HTTPServerResponseBody
    /// Called once the response has been written, or abandoned (the client left, the body threw, the server
    /// stopped), with the body bytes that went out and the error that ended it early, if any. On the
    /// connection's thread: keep it short.
    public var onFinish: (@Sendable (_ bodyBytesWritten: Int, _ error: (any Error)?) -> Void)?

    /// Creates a response.
    public init(
        status: HTTPResponse.Status, headerFields: HTTPFields = [:], body: HTTPServerResponseBody = .bytes([]),
        onFinish: (@Sendable (_ bodyBytesWritten: Int, _ error: (any Error)?) -> Void)? = nil
    ) {
        self.head = HTTPResponse(status: status, headerFields: headerFields)
        self.body = body
        self.onFinish = onFinish
    }
}

/// A response body: bytes known up front, or a writer closure that produces them on the connection's thread.
public enum HTTPServerResponseBody: Sendable {
    /// The whole body, sent with its `Content-Length`.
    case bytes([UInt8])
    /// A body produced by `write`, which blocks while the client is slower than it (the socket's buffer is the
    /// only queue). With a `contentLength` it is announced; without, it goes out chunked. A `write` that throws
    /// ends the response early and closes the connection: the client sees a body cut short.
    case stream(contentLength: Int?, write: @Sendable (inout HTTPBodyWriter) throws -> Void)
}
