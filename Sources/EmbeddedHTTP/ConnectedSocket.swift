import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One accepted connection's non-blocking socket: reads for the server's event loop, writes for a handler
/// thread (waiting in `poll(2)` for room, at most the send timeout), and a `shutdown` that the server may call
/// from another thread to end it (a waiting write then fails at once).
///
/// The descriptor is closed once, under the same lock as `shutdown`, so a late `shutdown` never reaches a
/// descriptor number the process has already reused for something else.
final class ConnectedSocket: Sendable {
    let fd: Int32
    private let sendTimeout: Duration
    private let closed = Mutex(false)

    /// What one ``receive(into:)`` gave.
    enum Received {
        /// Bytes were appended.
        case bytes
        /// Nothing to read now.
        case wouldBlock
        /// End of stream, or an error: the connection is over.
        case closed
    }

    init(fd: Int32, sendTimeout: Duration) {
        self.fd = fd
        self.sendTimeout = sendTimeout
    }

    /// Sends all of `bytes`, retrying partial sends and waiting for room up to the send timeout each time;
    /// `MSG_NOSIGNAL`, so a client that left gives an error, not SIGPIPE.
    func send(_ bytes: [UInt8]) throws(HTTPServerError) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { buffer in
                Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent >= 0 {
                offset += sent
                continue
            }
            switch errno {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                let ready = poll(&entry, 1, sendTimeout.pollMilliseconds)
                if ready == 0 {
                    throw HTTPServerError(.connectionClosed, "send: the client read nothing for \(sendTimeout)")
                }
            default:
                throw HTTPServerError(.connectionClosed, "send: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Reads what is there (up to `capacity` bytes) onto the end of `buffer`, without waiting.
    func receive(into buffer: inout [UInt8], capacity: Int = 16 * 1024) -> Received {
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: capacity))
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + start, capacity, 0) }
            if count > 0 {
                buffer.removeLast(capacity - count)
                return .bytes
            }
            if count < 0 && errno == EINTR { continue }
            buffer.removeLast(capacity)
            return count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? .wouldBlock : .closed
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
