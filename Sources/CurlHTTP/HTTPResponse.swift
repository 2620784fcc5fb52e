/// A complete HTTP response as the server sent it: status, headers and the whole body.
///
/// The client does not judge the response: any status (including a `3xx` it did not follow, and
/// `5xx`) is returned as is, and a `200` whose body is an error document is still a `200`. Deciding
/// whether the bytes are what was wanted is the caller's job.
public struct HTTPResponse: Sendable {
    /// The URL that answered: the one requested, or where same-host redirects led
    /// (``HTTPClientConfiguration/maxRedirects``).
    public let url: String
    /// The HTTP status code of the final response, such as 200 or 404 (`CURLINFO_RESPONSE_CODE`).
    public let status: Int
    /// The header fields of the final response.
    public let headers: HTTPHeaders
    /// The body, after any `Content-Encoding` was undone; at most the body limit in force
    /// (the request's or the configuration's `maxBodySize`); empty for a `304 Not Modified`.
    public let body: [UInt8]
    /// Where a redirect pointed, as an absolute URL resolved against ``url`` (`CURLINFO_REDIRECT_URL`);
    /// nil when the response is not a redirect with a usable `Location`.
    public let redirectURL: String?
    /// Why the redirect this response asks for was not followed (`it leads to another host (h)`, `more
    /// than 5 redirects`); nil when it is not a redirect, or the client follows none.
    public let refusedRedirect: String?

    /// Creates a response.
    public init(
        url: String, status: Int, headers: HTTPHeaders, body: [UInt8], redirectURL: String? = nil,
        refusedRedirect: String? = nil
    ) {
        self.url = url
        self.status = status
        self.headers = headers
        self.body = body
        self.redirectURL = redirectURL
        self.refusedRedirect = refusedRedirect
    }

    /// The same response, saying why its redirect was not followed.
    func refusingRedirect(_ reason: String) -> HTTPResponse {
        HTTPResponse(url: url, status: status, headers: headers, body: body, redirectURL: redirectURL, refusedRedirect: reason)
    }

    /// Whether the status asks the client to repeat the request elsewhere (`Location`).
    var isRedirect: Bool { [301, 302, 303, 307, 308].contains(status) }
}
