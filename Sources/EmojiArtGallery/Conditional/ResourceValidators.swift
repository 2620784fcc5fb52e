import HTTPTypes

/// The validators the gallery sends with a representation (`ETag`, `Last-Modified`), and the
/// decision whether a conditional GET gets `304 Not Modified` (RFC 9110 section 13).
///
/// Precedence as in RFC 9110 section 13.2.2: when `If-None-Match` is present it alone decides
/// (weak comparison, `*` matches anything); otherwise `If-Modified-Since` does, if it parses
/// and the representation was last modified at or before it.
struct ResourceValidators: Sendable, Equatable {
    /// The entity tag with its quotes (and `W/` when weak), e.g. `"i-0123456789abcdef"`.
    var etag: String
    /// When the representation last changed, in whole seconds since the epoch; nil when it
    /// changes on every request (then no `Last-Modified` is sent and `If-Modified-Since` never matches).
    var lastModified: Int?

    /// Whether `request` is a conditional GET this representation satisfies: answer 304.
    func notModified(for request: HTTPRequest) -> Bool {
        let noneMatch = request.headerFields[values: .ifNoneMatch]
        if !noneMatch.isEmpty {
            let ours = Self.opaque(etag)
            for value in noneMatch {
                for candidate in value.split(separator: ",") {
                    let tag = candidate.trimmingCharacters(inSet: " \t")
                    if tag == "*" || Self.opaque(tag) == ours { return true }
                }
            }
            return false
        }
        guard let lastModified, let since = request.headerFields[.ifModifiedSince], let date = HTTPDate.parse(since) else {
            return false
        }
        return lastModified <= date
    }

    /// `ETag` and `Last-Modified` fields to add to an answer.
    var headerFields: HTTPFields {
        var fields: HTTPFields = [.eTag: etag]
        if let lastModified { fields[.lastModified] = HTTPDate.format(lastModified) }
        return fields
    }

    /// The tag without a weak prefix: weak comparison compares only this.
    private static func opaque(_ tag: some StringProtocol) -> Substring {
        let text = Substring(tag)
        return text.hasPrefix("W/") ? text.dropFirst(2) : text
    }
}

extension StringProtocol {
    /// The text without leading and trailing characters from `set`.
    fileprivate func trimmingCharacters(inSet set: String) -> Substring {
        let text = Substring(self)
        guard let first = text.firstIndex(where: { !set.contains($0) }),
            let last = text.lastIndex(where: { !set.contains($0) })
        else { return "" }
        return text[first...last]
    }
}
