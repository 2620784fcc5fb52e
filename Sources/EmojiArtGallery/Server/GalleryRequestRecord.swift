/// One finished request, as handed to ``GalleryConfiguration/requestLogger``.
///
/// Made when the response body has been written, or abandoned (client gone, a fault cut it
/// short), so ``bytes`` is what was actually handed to the connection.
public struct GalleryRequestRecord: Sendable, Equatable {
    /// HTTP method, e.g. `GET`.
    public var method: String
    /// Path and query exactly as requested, e.g. `/gallery/image?3`.
    public var path: String
    /// Status code sent.
    public var status: Int
    /// Body bytes written.
    public var bytes: Int
    /// The fault that shaped the response (``ImageFault/name``, `feedStatus`, `emptyFeed`), or `none`.
    public var fault: String
    /// Why the body ended early, when it did (e.g. the client hung up, or `truncated` on purpose).
    public var error: String?

    /// Creates a record from its fields.
    public init(method: String, path: String, status: Int, bytes: Int, fault: String, error: String? = nil) {
        self.method = method
        self.path = path
        self.status = status
        self.bytes = bytes
        self.fault = fault
        self.error = error
    }

    /// The record as one logfmt line, without newline:
    /// `method=GET path=/gallery/image?3 status=200 bytes=41234 fault=none`
    /// (and `error="..."` when set). Values with spaces, quotes or `=` are quoted.
    public var logfmt: String {
        var fields = [
            ("method", method), ("path", path), ("status", String(status)), ("bytes", String(bytes)), ("fault", fault),
        ]
        if let error { fields.append(("error", error)) }
        return fields.map { "\($0.0)=\(Self.logfmtValue($0.1))" }.joined(separator: " ")
    }

    /// Quotes and escapes a logfmt value when it needs it.
    static func logfmtValue(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0 == " " || $0 == "=" || $0 == "\"" || $0 == "\\" || $0.isNewline }) else {
            return value
        }
        var escaped = ""
        for character in value {
            switch character {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            default: escaped.append(character)
            }
        }
        return "\"\(escaped)\""
    }
}
