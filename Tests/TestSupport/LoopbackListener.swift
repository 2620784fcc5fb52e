import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A listening TCP socket on a loopback address, for the test servers and the tests of a client's failures.
public enum LoopbackListener {
    /// A TCP socket listening on `host` at a port the kernel picked; its descriptor and port.
    public static func listen(host: String, backlog: Int32) throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            close(fd)
            throw TestFailure("not an IPv4 address: \(host)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && Glibc.listen(fd, backlog) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            let error = errno
            close(fd)
            throw TestFailure("cannot listen on \(host): errno \(error)")
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}
