import HTTPTypes

/// Puts one response on the wire: the status line, the header fields with the framing the server chooses
/// (`Content-Length`, or `Transfer-Encoding: chunked` for a stream of unknown length; `Connection: close` when
/// the connection ends after it), then the body. Tells the response's `onFinish` what went out.
enum HTTPResponseWriter {
    /// Returns whether the response went out whole, so the connection may carry another one.
    static func write(
        _ response: HTTPServerResponse, to socket: ConnectedSocket, keepAlive: Bool, headOnly: Bool,
        stopping: @escaping @Sendable () -> Bool
    ) -> Bool {
        let status = response.head.status
        let bodyless = headOnly || status.code == 304 || status.code == 204 || status.kind == .informational
        var fields = response.head.headerFields
        fields[.contentLength] = nil
        fields[.transferEncoding] = nil
        fields[.connection] = keepAlive ? nil : "close"
        var chunked = false
        switch response.body {
        case .bytes(let bytes):
            if status.code != 304 && status.code != 204 { fields[.contentLength] = String(bytes.count) }
        case .stream(let length?, _):
            fields[.contentLength] = String(length)
        case .stream(nil, _):
            chunked = !bodyless
            if chunked { fields[.transferEncoding] = "chunked" }
        }
        var head = "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n"
        for field in fields {
            head += "\(field.name.rawName): \(field.value)\r\n"
        }
        head += "\r\n"
        var writer = HTTPBodyWriter(socket: socket, chunked: chunked, stopping: stopping)
        do {
            if case .bytes(let bytes) = response.body, !bodyless {
                // Head and body in one send: one segment for a small answer.
                try socket.send(Array(head.utf8) + bytes)
                writer.counted(bytes.count)
            } else {
                try socket.send(Array(head.utf8))
            }
            if !bodyless {
                switch response.body {
                case .bytes:
                    break
                case .stream(_, let produce):
                    try produce(&writer)
                    try writer.finish()
                }
            }
        } catch {
            response.onFinish?(writer.bytesWritten, error)
            return false
        }
        response.onFinish?(writer.bytesWritten, nil)
        return true
    }
}
