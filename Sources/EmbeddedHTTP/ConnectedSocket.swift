import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One accepted connection's socket: blocking sends and receives for its own thread, and a `shutdown` that the
/// server may call from another thread to end it (a blocked `recv` or `send` then returns at once).
///
/// The descriptor is closed once, under the same lock as `shutdown`, so a late `shutdown` never reaches a
/// descriptor number the process has already reused for something else.
final class ConnectedSocket: Sendable {
    private let fd: Int32
    private let closed = Mutex(false)

    init(fd: Int32) {
        self.fd = fd
    }

    /// Sends all of `bytes`, retrying partial sends; `MSG_NOSIGNAL`, so a client that left gives an error, not
    /// SIGPIPE.
    func send(_ bytes: [UInt8]) throws(HTTPServerError) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { buffer in
                Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                throw HTTPServerError(.connectionClosed, "send: \(String(cString: strerror(errno)))")
            }
            offset += sent
        }
    }

    /// Receives up to `capacity` bytes into the end of `buffer`; returns false at end of stream or on error.
    func receive(into buffer: inout [UInt8], capacity: Int = 16 * 1024) -> Bool {
        var chunk = [UInt8](repeating: 0, count: capacity)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, capacity, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[..<count])
                return true
            }
            if count < 0 && errno == EINTR { continue }
            return false
        }
    }

    /// Ends the connection in both directions (from any thread); a no-op once closed.
    func shutdown() {
        closed.withLock { closed in
            if !closed { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    /// Closes the descriptor (once).
    func close() {
        closed.withLock { closed in
            if !closed {
                closed = true
                _ = Glibc.close(fd)
            }
        }
    }
}
