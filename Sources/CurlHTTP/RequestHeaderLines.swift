/// Extra request header fields, checked and turned into the `Name: value` lines libcurl sends
/// (`CURLOPT_HTTPHEADER`).
///
/// Checked because the values often come from a server (an `ETag` echoed back in
/// `If-None-Match`): a name must be an RFC 9110 token, and neither a name nor a value may hold
/// CR, LF or NUL, so no value can smuggle a second header or a second request onto the wire.
/// A field with an empty value is written `Name;`, libcurl's spelling for "send it empty"
/// (`Name:` alone would remove a header libcurl adds itself).
struct RequestHeaderLines: Sendable {
    /// The lines, in the order given, without CRLF.
    let lines: [String]

    /// Checks `headers`; throws ``HTTPClientError/Kind/invalidRequest`` naming the bad field.
    init(_ headers: HTTPHeaders, url: String) throws(HTTPClientError) {
        var lines: [String] = []
        lines.reserveCapacity(headers.count)
        for field in headers {
            guard !field.name.isEmpty, field.name.utf8.allSatisfy(Self.isTokenByte) else {
                throw .invalidRequest(url: url, reason: "request header name \"\(field.name)\" is not an HTTP token")
            }
            guard !field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) else {
                throw .invalidRequest(url: url, reason: "request header \(field.name) holds a CR, LF or NUL byte")
            }
            lines.append(field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)")
        }
        self.lines = lines
    }

    /// `tchar` of RFC 9110 section 5.6.2: letters, digits and ``!#$%&'*+-.^_`|~``.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
