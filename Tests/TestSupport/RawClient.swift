import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The tests' one raw TCP client, blocking: what it sends is exactly the bytes given (malformed requests
/// included), and it reads until the server closes the connection or enough bytes have come. Run it off the
/// cooperative pool (`onOwnThread`) when the server it talks to is in the same process and needs the pool.
public final class RawClient {
    private let fd: Int32

    /// Connects to 127.0.0.1:`port`; a read gives up after `receiveTimeout` seconds without a byte.
    /// `receiveBufferBytes`: a small fixed receive buffer (`SO_RCVBUF`, set before connecting so the TCP window
    /// is negotiated with it, which also stops the kernel from growing it), for a slow reader.
    public init(port: Int, receiveTimeout: Int = 10, receiveBufferBytes: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: errno \(errno)") }
        var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if var size = receiveBufferBytes {
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw TestFailure("connect to port \(port): errno \(errno)")
        }
    }

    deinit { close(fd) }

    public func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    /// Sends all of `bytes`.
    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { throw TestFailure("send: \(offset) of \(bytes.count) sent, errno \(errno)") }
            offset += sent
        }
    }

    /// One read of at most `limit` bytes: what came, or nothing when the server closed the connection (an
    /// orderly end, or a reset). Throws when the receive timeout passes or the read fails otherwise.
    public func receive(limit: Int = 65536) throws -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: limit)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { return Array(chunk[..<count]) }
            if count == 0 || errno == ECONNRESET { return [] }
            if errno == EINTR { continue }
            throw TestFailure("recv: errno \(errno)")
        }
    }

    /// Closes the sending side (`shutdown(SHUT_WR)`), as `nc -N` does after its input: the server sees the end.
    public func finishSending() {
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    /// Reads until the server closes the connection (or the receive timeout passes); returns everything read and whether it closed
    /// (an orderly end, or a reset: a server that closes with unread bytes of ours sends one).
    public func readToEnd() -> (text: String, closed: Bool) {
        var received: [UInt8] = []
        while true {
            guard let chunk = try? receive() else { return (String(decoding: received, as: UTF8.self), false) }
            if chunk.isEmpty { return (String(decoding: received, as: UTF8.self), true) }
            received += chunk
        }
    }

    /// Reads until `text` has been seen `times` times (or the receive timeout passes).
    public func read(until text: String, times: Int = 1) -> String {
        var received = ""
        while received.components(separatedBy: text).count - 1 < times {
            guard let chunk = try? receive(), !chunk.isEmpty else { break }
            received += String(decoding: chunk, as: UTF8.self)
        }
        return received
    }
}
