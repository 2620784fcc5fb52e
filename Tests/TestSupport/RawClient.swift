import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP client for the server's tests: what it sends is exactly the bytes given (malformed requests
/// included), and it reads until the server closes the connection or enough bytes have come.
public final class RawClient {
    private let fd: Int32

    /// Connects to 127.0.0.1:`port`; a read gives up after `receiveTimeout` seconds without a byte.
    public init(port: Int, receiveTimeout: Int = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: errno \(errno)") }
        var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
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
        let bytes = Array(text.utf8)
        let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw TestFailure("send: \(sent) of \(bytes.count), errno \(errno)") }
    }

    /// Closes the sending side (`shutdown(SHUT_WR)`), as `nc -N` does after its input: the server sees the end.
    public func finishSending() {
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    /// Reads until the server closes the connection (or the receive timeout passes); returns everything read and whether it closed
    /// (an orderly end, or a reset: a server that closes with unread bytes of ours sends one).
    public func readToEnd() -> (text: String, closed: Bool) {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += chunk[..<count]
            } else {
                return (String(decoding: received, as: UTF8.self), count == 0 || errno == ECONNRESET)
            }
        }
    }

    /// Reads until `text` has been seen `times` times (or the receive timeout passes).
    public func read(until text: String, times: Int = 1) -> String {
        var received = ""
        var chunk = [UInt8](repeating: 0, count: 65536)
        while received.components(separatedBy: text).count - 1 < times {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            received += String(decoding: chunk[..<count], as: UTF8.self)
        }
        return received
    }
}
