import CCurl

/// Why an HTTP request failed, in a form a person can act on and a program can match.
///
/// ``kind`` is for code (`switch error.kind`), ``message`` is for the log line: it names the
/// URL or host and, where it helps, what to check (`connection refused by 127.0.0.1:8080 (is
/// the gallery running?)`). For failures that came out of libcurl, ``call`` names the C
/// function, ``curlCode`` the `CURLcode`/`CURLMcode`, ``curlMessage`` its `curl_easy_strerror`
/// text and ``detail`` the more specific `CURLOPT_ERRORBUFFER` text. ``systemErrno`` is the
/// last `errno` libcurl saw on the socket (`CURLINFO_OS_ERRNO`), when there was one.
///
/// Cancellation of the calling task is reported as Swift's `CancellationError`, not as this
/// type, so that `Task` cancellation looks the same here as everywhere else; ``Kind/cancelled``
/// is used only when the client itself was shut down under a request.
public struct HTTPClientError: Error, Sendable, CustomStringConvertible {
    /// The category of failure.
    public enum Kind: Sendable, Hashable, CustomStringConvertible {
        /// Nothing listens on the port (`ECONNREFUSED`): the server is down or the port is wrong.
        case refused
        /// A connect, low-speed or total timeout expired (`CURLE_OPERATION_TIMEDOUT`).
        case timedOut
        /// The host name did not resolve (`CURLE_COULDNT_RESOLVE_HOST`).
        case resolveFailed
        /// The server answered with a status other than 200 (a `304 Not Modified` included). Only
        /// ``CurlHTTPClient/fetch(_:)`` throws this; ``CurlHTTPClient/get(_:headers:maxBodySize:)``
        /// returns every status.
        case httpStatus(Int)
        /// The body is, or was declared to be, larger than the configured limit in bytes
        /// (`CURLE_FILESIZE_EXCEEDED`, or the write callback refusing more data).
        case tooLarge(limit: Int)
        /// The connection closed before the declared body arrived (`CURLE_PARTIAL_FILE`).
        case truncated
        /// Not an `http` or `https` URL, or not a URL at all; nothing was sent.
        case unsupportedURL
        /// The request itself is malformed (a request header with a bad name, or CR/LF in a value);
        /// nothing was sent.
        case invalidRequest
        /// TLS handshake or certificate verification failed.
        case tls
        /// The client was shut down while the request was queued or running.
        case cancelled
        /// Any other transport failure: reset connection, empty reply, protocol error, out of memory.
        case transport

        /// The case name, for logfmt (`kind=timedOut`, `kind=httpStatus(500)`).
        public var description: String {
            switch self {
            case .refused: "refused"
            case .timedOut: "timedOut"
            case .resolveFailed: "resolveFailed"
            case .httpStatus(let status): "httpStatus(\(status))"
            case .tooLarge(let limit): "tooLarge(limit: \(limit))"
            case .truncated: "truncated"
            case .unsupportedURL: "unsupportedURL"
            case .invalidRequest: "invalidRequest"
            case .tls: "tls"
            case .cancelled: "cancelled"
            case .transport: "transport"
            }
        }
    }

    /// The category of failure.
    public var kind: Kind
    /// The URL of the request (or an empty string for failures not tied to a request).
    public var url: String
    /// One sentence for a person reading the log.
    public var message: String
    /// The libcurl (or POSIX) function whose failure this reports, such as `curl_multi_perform`.
    public var call: String?
    /// The `CURLcode` (for transfers and easy options) or `CURLMcode` (for multi calls), if any.
    public var curlCode: Int?
    /// libcurl's short text for ``curlCode`` (`curl_easy_strerror` / `curl_multi_strerror`).
    public var curlMessage: String?
    /// libcurl's detailed text for this transfer (`CURLOPT_ERRORBUFFER`), if it wrote one.
    public var detail: String?
    /// The `errno` behind the failure (`CURLINFO_OS_ERRNO`, or `errno` of a POSIX call), if any.
    public var systemErrno: Int32?
    /// How long the server asked the client to wait before asking again: the `Retry-After` of a `429` or `503`
    /// (``RetryAfter``), nil when it sent none or one that does not parse.
    public var retryAfter: Duration?

    /// Creates an error; prefer the specific factory methods inside the module.
    public init(
        kind: Kind,
        url: String,
        message: String,
        call: String? = nil,
        curlCode: Int? = nil,
        curlMessage: String? = nil,
        detail: String? = nil,
        systemErrno: Int32? = nil
    ) {
        self.kind = kind
        self.url = url
        self.message = message
        self.call = call
        self.curlCode = curlCode
        self.curlMessage = curlMessage
        self.detail = detail
        self.systemErrno = systemErrno
    }

    /// The message, then the machine details in parentheses:
    /// `timed out after 1s receiving http://h/x (curl_multi_perform: code 28 "Timeout was reached": Operation too slow...)`.
    public var description: String {
        var parts: [String] = []
        if let call { parts.append(call) }
        if let curlCode {
            var codeText = "code \(curlCode)"
            if let curlMessage { codeText += " \"\(curlMessage)\"" }
            parts.append(codeText)
        }
        if let detail, !detail.isEmpty, detail != curlMessage { parts.append(detail) }
        if let systemErrno, systemErrno != 0 { parts.append("errno \(systemErrno)") }
        return parts.isEmpty ? message : "\(message) (\(parts.joined(separator: ": ")))"
    }
}

extension HTTPClientError {
    /// A status other than the one wanted (`fetch` wants 200), as ``Kind/httpStatus(_:)``. For a
    /// redirect, `location` (the response's `Location`, at most 256 bytes of it kept) is named in the
    /// message, and `refusal` says why it was not followed: the reader learns where the server wanted it
    /// to go.
    public static func httpStatus(_ status: Int, url: String, location: String? = nil, refusal: String? = nil) -> HTTPClientError {
        var message = status == 304
            ? "HTTP 304 Not Modified from \(url), but a body was wanted"
            : "HTTP \(status) from \(url)"
        if (300...399).contains(status), status != 304, let location, !location.isEmpty {
            let shown = location.utf8.count <= 256 ? location : String(decoding: location.utf8.prefix(256), as: UTF8.self) + "..."
            message += " (redirect to \(shown) not followed" + (refusal.map { ": \($0))" } ?? ")")
        }
        return HTTPClientError(kind: .httpStatus(status), url: url, message: message)
    }

    /// ``httpStatus(_:url:location:refusal:)`` for a response: its redirect target (resolved, else the raw
    /// `Location`) and why the client did not follow it.
    /// A `429` or `503` with a `Retry-After` keeps the wait it asked for (``retryAfter``) and says it.
    public static func httpStatus(of response: HTTPResponse) -> HTTPClientError {
        var error = httpStatus(
            response.status, url: response.url, location: response.redirectURL ?? response.headers["location"],
            refusal: response.refusedRedirect)
        if let wait = RetryAfter.wait(in: response) {
            error.retryAfter = wait
            error.message += " asking to wait \(wait.humanReadable) (Retry-After: \(response.headers["retry-after"] ?? ""))"
        }
        return error
    }

    /// The request could not be built as given; nothing was sent.
    static func invalidRequest(url: String, reason: String) -> HTTPClientError {
        HTTPClientError(kind: .invalidRequest, url: url, message: "refusing to send \(url): \(reason)")
    }

    /// The URL is not one this client will open.
    static func unsupportedURL(_ url: String, reason: String) -> HTTPClientError {
        HTTPClientError(
            kind: .unsupportedURL, url: url,
            message: "refusing \(url.isEmpty ? "an empty URL" : url): \(reason)")
    }

    /// The client was shut down before the request finished.
    static func shutDown(url: String) -> HTTPClientError {
        HTTPClientError(kind: .cancelled, url: url, message: "HTTP client shut down before \(url) finished")
    }

    /// A multi-handle call (`CURLMcode`) failed.
    static func multi(_ call: String, _ code: CURLMcode, url: String = "") -> HTTPClientError {
        HTTPClientError(
            kind: .transport, url: url,
            message: "libcurl \(call) failed" + (url.isEmpty ? "" : " for \(url)"),
            call: call, curlCode: Int(code.rawValue),
            curlMessage: String(cString: curl_multi_strerror(code)))
    }

    /// An easy-handle setup call (`CURLcode`) failed before the transfer started.
    static func easy(_ call: String, _ code: CURLcode, url: String) -> HTTPClientError {
        HTTPClientError(
            kind: .transport, url: url, message: "libcurl \(call) failed for \(url)",
            call: call, curlCode: Int(code.rawValue),
            curlMessage: String(cString: curl_easy_strerror(code)))
    }

    /// A human size: `32 MiB`, `64 KiB`, `1000 bytes`.
    static func byteCount(_ bytes: Int) -> String {
        let mebibyte = 1024 * 1024
        if bytes >= mebibyte, bytes % mebibyte == 0 { return "\(bytes / mebibyte) MiB" }
        if bytes >= 1024, bytes % 1024 == 0 { return "\(bytes / 1024) KiB" }
        return bytes == 1 ? "1 byte" : "\(bytes) bytes"
    }
}
