import CurlHTTP

/// The validators a server gave with a representation, `ETag` and `Last-Modified`, kept exactly
/// as sent so that the next request for it can be conditional (`If-None-Match`,
/// `If-Modified-Since`; RFC 9110 section 13).
///
/// Opaque strings: the agent never interprets them, it only hands them back. Codable so that
/// they can be kept with the index between runs.
struct HTTPValidators: Sendable, Equatable, Hashable, Codable {
    /// The `ETag` value with its quotes and any `W/` prefix, e.g. `W/"f-0123"`.
    var etag: String?
    /// The `Last-Modified` value, an HTTP date, e.g. `Sun, 22 Nov 2026 23:42:49 GMT`.
    var lastModified: String?

    /// Creates validators from their strings.
    init(etag: String?, lastModified: String?) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// The validators in `headers`; both nil (``isEmpty``) when the server sent neither.
    init(headers: HTTPHeaders) {
        self.init(
            etag: headers["etag"].flatMap { $0.isEmpty ? nil : $0 },
            lastModified: headers["last-modified"].flatMap { $0.isEmpty ? nil : $0 })
    }

    /// Whether the server gave no validator: a request with these is not conditional.
    var isEmpty: Bool { etag == nil && lastModified == nil }

    /// `If-None-Match` and `If-Modified-Since` for a conditional GET. Both are sent: a server
    /// that knows the entity tag decides by it alone (RFC 9110 section 13.2.2).
    var conditionalRequestHeaders: HTTPHeaders {
        var fields: [HTTPHeaders.Field] = []
        if let etag { fields.append(.init(name: "If-None-Match", value: etag)) }
        if let lastModified { fields.append(.init(name: "If-Modified-Since", value: lastModified)) }
        return HTTPHeaders(fields)
    }
}
