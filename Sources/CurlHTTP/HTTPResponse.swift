/// A complete HTTP response as the server sent it: status, headers and the whole body.
///
/// The client does not judge the response: any status (including `3xx`, since redirects are
/// never followed, and `5xx`) is returned as is, and a `200` whose body is an error document is
/// still a `200`. Deciding whether the bytes are what was wanted is the caller's job.
public struct HTTPResponse: Sendable {
    /// The URL that was requested (redirects are never followed, so it is also the URL that answered).
    public let url: String
    /// The HTTP status code of the final response, such as 200 or 404 (`CURLINFO_RESPONSE_CODE`).
    public let status: Int
    /// The header fields of the final response.
    public let headers: HTTPHeaders
    /// The body, after any `Content-Encoding` was undone; at most the body limit in force
    /// (the request's or the configuration's `maxBodySize`); empty for a `304 Not Modified`.
    public let body: [UInt8]

    /// Creates a response.
    public init(url: String, status: Int, headers: HTTPHeaders, body: [UInt8]) {
        self.url = url
        self.status = status
        self.headers = headers
        self.body = body
    }
}
