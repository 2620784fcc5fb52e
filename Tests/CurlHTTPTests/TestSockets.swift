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
/// accept queue is full, and counts of the process's file descriptors and threads.
enum TestSockets {
    /// A TCP socket listening on 127.0.0.1 at a port the kernel picked; returns fd and port.
    static func listen(backlog: Int32) throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSocketError(call: "socket", errno: errno) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let error = TestSocketError(call: "bind", errno: errno)
            close(fd)
            throw error
        }
        guard Glibc.listen(fd, backlog) == 0 else {
            let error = TestSocketError(call: "listen", errno: errno)
            close(fd)
            throw error
        }
        return (fd, try port(of: fd))
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

    /// Number of open file descriptors of this process (entries of `/proc/self/fd`).
    static func openFileDescriptorCount() -> Int {
        directoryEntryCount("/proc/self/fd")
    }

    /// Number of threads of this process (entries of `/proc/self/task`).
    static func threadCount() -> Int {
        directoryEntryCount("/proc/self/task")
    }

    /// Threads of this process named `name` (`/proc/self/task/*/comm`).
    static func threadCount(named name: String) -> Int {
        guard let directory = opendir("/proc/self/task") else { return -1 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let task = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard task.first != ".", let file = fopen("/proc/self/task/\(task)/comm", "r") else { continue }
            defer { fclose(file) }
            var line = [CChar](repeating: 0, count: 64)
            if fgets(&line, Int32(line.count), file) != nil,
                String(decoding: line.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) == name {
                count += 1
            }
        }
        return count
    }

    private static func directoryEntryCount(_ path: String) -> Int {
        guard let directory = opendir(path) else { return -1 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let isDot = withUnsafeBytes(of: entry.pointee.d_name) { name in
                name[0] == UInt8(ascii: ".") && (name[1] == 0 || (name[1] == UInt8(ascii: ".") && name[2] == 0))
            }
            if !isDot { count += 1 }
        }
        // opendir's own descriptor is in the listing of /proc/self/fd.
        return path == "/proc/self/fd" ? count - 1 : count
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    private static func port(of fd: Int32) throws -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { throw TestSocketError(call: "getsockname", errno: errno) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
