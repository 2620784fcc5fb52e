import HTTPTypes

/// One request as the server read it: the head (method, target, header fields) in swift-http-types' model,
/// and the whole body (sent with `Content-Length`; the server refuses other framings).
public struct HTTPServerRequest: Sendable {
    /// Method, path with query, and header fields.
    public var head: HTTPRequest
    /// The body, empty when there is none.
    public var body: [UInt8]

    /// Creates a request from its parts.
    public init(head: HTTPRequest, body: [UInt8]) {
        self.head = head
        self.body = body
    }

    /// The request target exactly as sent, e.g. `/gallery/image?3`.
    public var target: String { head.path ?? "" }

    /// The target before `?`.
    public var path: Substring {
        let target = head.path ?? ""
        return target.firstIndex(of: "?").map { target[..<$0] } ?? Substring(target)
    }

    /// The target after the first `?`, or nil when there is no `?`.
    public var query: Substring? {
        let target = head.path ?? ""
        return target.firstIndex(of: "?").map { target[target.index(after: $0)...] }
    }
}
