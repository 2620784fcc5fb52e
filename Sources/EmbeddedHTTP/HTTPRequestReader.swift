import HTTPTypes

/// Reads requests off one connection as its bytes come: the head up to its blank line (at most
/// `maximumHeadSize` bytes), then a body of exactly `Content-Length` bytes (at most `maximumBodySize`). Keeps
/// what it read past one request for the next (pipelining). A value: it travels with its connection between
/// the event loop and a handler thread.
struct HTTPRequestReader: Sendable {
    /// What the next read gave.
    enum Outcome: Sendable {
        /// A request, and whether the connection may carry another one after it.
        case request(HTTPServerRequest, keepAlive: Bool)
        /// A request the server will not serve: answer `status` with `reason`, then close.
        case refuse(HTTPResponse.Status, reason: String)
        /// The buffer holds no whole request yet.
        case incomplete
    }

    let maximumHeadSize: Int
    let maximumBodySize: Int
    private var buffer: [UInt8] = []

    init(maximumHeadSize: Int, maximumBodySize: Int) {
        self.maximumHeadSize = maximumHeadSize
        self.maximumBodySize = maximumBodySize
    }

    /// Bytes read and not yet part of an answered request.
    var bufferedCount: Int { buffer.count }

    /// Whether part of a request has arrived (so the request timeout runs, not the idle one).
    var hasPartialRequest: Bool { !buffer.isEmpty }

    /// Reads what the socket has (without waiting) into the buffer.
    mutating func receive(from socket: ConnectedSocket) -> ConnectedSocket.Received {
        socket.receive(into: &buffer)
    }

    /// The next request if the buffer holds all of it; `.incomplete` when more bytes are needed.
    mutating func next() -> Outcome {
        guard let end = Self.blankLine(in: buffer) else {
            if buffer.count > maximumHeadSize {
                return .refuse(.init(code: 431, reasonPhrase: "Request Header Fields Too Large"),
                               reason: "the request head is larger than \(maximumHeadSize) bytes")
            }
            if let first = buffer.first, !Self.canStartRequest(first) {
                return .refuse(.badRequest, reason: first == 0x16
                    ? "this server speaks plain HTTP, and the client started a TLS handshake (use http://, not https://)"
                    : "the bytes received are not an HTTP request")
            }
            return .incomplete
        }
        guard end <= maximumHeadSize else {
            return .refuse(.init(code: 431, reasonPhrase: "Request Header Fields Too Large"),
                           reason: "the request head is larger than \(maximumHeadSize) bytes")
        }
        let headText = String(decoding: buffer[..<end], as: UTF8.self)
        let parsed: (HTTPRequest, keepAlive: Bool)
        switch Self.parseHead(headText) {
        case .success(let head): parsed = head
        case .failure(let refusal): return .refuse(refusal.status, reason: refusal.reason)
        }
        var head = parsed.0
        if head.headerFields[.transferEncoding] != nil {
            return .refuse(.notImplemented, reason: "request bodies must be sent with Content-Length, not Transfer-Encoding")
        }
        var length = 0
        if let declared = head.headerFields[.contentLength] {
            guard let value = Int(declared), value >= 0 else {
                return .refuse(.badRequest, reason: "invalid Content-Length: \(declared)")
            }
            length = value
        }
        guard length <= maximumBodySize else {
            return .refuse(.contentTooLarge, reason: "the request body is larger than \(maximumBodySize) bytes")
        }
        let bodyStart = end + 4
        guard buffer.count - bodyStart >= length else { return .incomplete }
        let body = Array(buffer[bodyStart..<(bodyStart + length)])
        buffer.removeFirst(bodyStart + length)
        head.headerFields[.contentLength] = nil
        return .request(HTTPServerRequest(head: head, body: body), keepAlive: parsed.keepAlive)
    }

    /// Whether `byte` can begin a request line: a method is a token (RFC 9110), and clients may send an empty
    /// line before a request (RFC 9112, 2.2). Anything else (0x16 opens a TLS handshake) is answered at once,
    /// instead of waiting for a blank line that never comes.
    private static func canStartRequest(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "\r"), UInt8(ascii: "\n"):
            true
        default:
            Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// Where `\r\n\r\n` starts in `bytes`.
    private static func blankLine(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var index = 0
        while index + 3 < bytes.count {
            if bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
                return index
            }
            index += 1
        }
        return nil
    }

    struct Refusal: Error {
        var status: HTTPResponse.Status
        var reason: String
    }

    /// The request line and header fields; HTTP/1.1 keeps the connection unless `Connection: close`,
    /// HTTP/1.0 closes it.
    static func parseHead(_ text: String) -> Result<(HTTPRequest, keepAlive: Bool), Refusal> {
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard !lines.isEmpty else { return .failure(Refusal(status: .badRequest, reason: "empty request")) }
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard requestLine.count == 3, let method = HTTPRequest.Method(String(requestLine[0])), requestLine[1].first == "/" else {
            return .failure(Refusal(status: .badRequest, reason: "malformed request line"))
        }
        let version = requestLine[2]
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
            return .failure(Refusal(status: .init(code: 505, reasonPhrase: "HTTP Version Not Supported"),
                                    reason: "unsupported version \(version)"))
        }
        var fields = HTTPFields()
        var authority: String?
        for line in lines {
            guard let colon = line.firstIndex(of: ":"), let name = HTTPField.Name(String(line[..<colon])) else {
                return .failure(Refusal(status: .badRequest, reason: "malformed header field line"))
            }
            let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            let trimmed = String(value.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
            // swift-http-types keeps `Host` as the request's authority, not as a field.
            if name.canonicalName == "host" {
                authority = trimmed
            } else {
                fields.append(HTTPField(name: name, value: trimmed))
            }
        }
        let closes = fields[values: .connection].contains { $0.lowercased().contains("close") }
        let keepAlive = version == "HTTP/1.1" && !closes
        let head = HTTPRequest(method: method, scheme: nil, authority: authority, path: String(requestLine[1]), headerFields: fields)
        return .success((head, keepAlive))
    }
}
