import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A POSIX call that failed while a test set up its sockets.
struct TestSocketError: Error, CustomStringConvertible {
    let call: String
    let errno: Int32
    var description: String { "\(call) failed: errno \(errno) (\(String(cString: strerror(errno))))" }
}

/// Raw socket helpers for tests: listeners on 127.0.0.1, closed ports, a listener whose
/// accept queue is full. (The process's descriptors and threads: `ProcessResources` in TestSupport.)
enum TestSockets {
    /// A TCP socket listening on 127.0.0.1 at a port the kernel picked; returns fd and port.
    static func listen(backlog: Int32) throws -> (fd: Int32, port: Int) {
        try LoopbackListener.listen(host: "127.0.0.1", backlog: backlog)
    }

    /// A port on 127.0.0.1 where nothing listens: bound, read, and closed again.
    static func closedPort() throws -> Int {
        let (fd, port) = try listen(backlog: 1)
        close(fd)
        return port
    }

    /// Connects to 127.0.0.1:`port` without waiting (non-blocking `connect`); returns the fd.
    static func connectWithoutWaiting(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSocketError(call: "socket", errno: errno) }
        var address = loopback(port: port)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return fd
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}
