#if canImport(Glibc)
import Glibc
#endif

/// Writes a streamed body to its connection, blocking until the kernel has taken each part: a client that reads
/// slowly slows the writer down, and nothing piles up beyond the socket's own buffer. Counts what went out.
public struct HTTPBodyWriter {
    private let socket: ConnectedSocket
    private let chunked: Bool
    private let stopping: @Sendable () -> Bool
    /// Body bytes written so far (chunk framing not counted).
    public private(set) var bytesWritten = 0

    init(socket: ConnectedSocket, chunked: Bool, stopping: @escaping @Sendable () -> Bool) {
        self.socket = socket
        self.chunked = chunked
        self.stopping = stopping
    }

    /// Whether the server is stopping: a body that could go on forever should end when this turns true.
    public var serverIsStopping: Bool { stopping() }

    /// Writes `bytes` (one chunk when the body is chunked). Throws when the connection is gone.
    public mutating func write(_ bytes: some Collection<UInt8>) throws(HTTPServerError) {
        guard !bytes.isEmpty else { return }
        if chunked {
            try socket.send(Array(String(bytes.count, radix: 16).utf8) + [13, 10])
            try socket.send(Array(bytes))
            try socket.send([13, 10])
        } else {
            try socket.send(Array(bytes))
        }
        bytesWritten += bytes.count
    }

    /// Counts `count` body bytes the server sent itself, together with the head.
    mutating func counted(_ count: Int) {
        bytesWritten += count
    }

    /// The end of a chunked body.
    mutating func finish() throws(HTTPServerError) {
        if chunked { try socket.send(Array("0\r\n\r\n".utf8)) }
    }
}
