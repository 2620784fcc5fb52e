import EmojiArtGallery
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// A tiny HTTP/1.1 server on a loopback address, on raw POSIX sockets (a thread per connection), for faults
/// the bundled gallery cannot produce: a connection reset in the middle of a body, a `Content-Length` that
/// lies, a redirect to another host. Every request gets what `handler` says for its target; the server
/// records the targets it received.
final class CraftedHTTPServer: Sendable {
    /// What the server does with one request.
    enum Reply: Sendable {
        /// A well-formed answer with a correct `Content-Length`; the connection stays open for the next request.
        case respond(status: Int, headers: [(String, String)] = [], body: [UInt8] = [])
        /// Exactly `bytes` (status line, headers and whatever body), then the connection ends as `ending` says.
        case raw([UInt8], ending: Ending)
    }

    enum Ending: Sendable {
        /// An orderly close (FIN).
        case close
        /// A reset (RST): `SO_LINGER` with a zero timeout, then `close`.
        case reset
    }

    /// The address it listens on, e.g. `127.0.0.1`.
    let host: String
    let port: Int
    private let listener: Int32
    private let handler: @Sendable (String) -> Reply
    private let state = Mutex<(targets: [String], connections: Set<Int32>, stopped: Bool)>(([], [], false))

    /// Listens on `host` (a loopback address) at a port the kernel picks and answers with `handler`.
    init(host: String = "127.0.0.1", handler: @escaping @Sendable (String) -> Reply) throws {
        self.host = host
        self.handler = handler
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
                bind(fd, pointer, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            let error = errno
            close(fd)
            throw TestFailure("cannot listen on \(host): errno \(error)")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// `http://HOST:PORT`, the agent's `--server`.
    var origin: String { "http://\(host):\(port)" }

    /// Every request target received, in order.
    var targets: [String] { state.withLock { $0.targets } }

    /// Stops accepting and ends every open connection. The threads end on their own.
    func stop() {
        let connections = state.withLock { state in
            state.stopped = true
            return state.connections
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for fd in connections { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    deinit {
        stop()
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)  // not inherited by the agents a test starts
            let accepted = state.withLock { state in
                if !state.stopped { state.connections.insert(fd) }
                return !state.stopped
            }
            guard accepted else {
                close(fd)
                return
            }
            Thread.detachNewThread { [self] in
                serve(fd)
                state.withLock { _ = $0.connections.remove(fd) }
                close(fd)
            }
        }
    }

    private func serve(_ fd: Int32) {
        var buffer: [UInt8] = []
        while let target = readRequestTarget(fd, &buffer) {
            state.withLock { $0.targets.append(target) }
            switch handler(target) {
            case .respond(let status, let headers, let body):
                var head = "HTTP/1.1 \(status) Status\r\nContent-Length: \(body.count)\r\n"
                for (name, value) in headers { head += "\(name): \(value)\r\n" }
                guard send(fd, Array((head + "\r\n").utf8) + body) else { return }
            case .raw(let bytes, let ending):
                _ = send(fd, bytes)
                if case .reset = ending {
                    var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                    setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                }
                return
            }
        }
    }

    /// Reads one request head; returns its target, or nil when the client hung up.
    private func readRequestTarget(_ fd: Int32, _ buffer: inout [UInt8]) -> String? {
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        while true {
            if let range = buffer.firstRange(of: end) {
                let head = String(decoding: buffer[..<range.lowerBound], as: UTF8.self)
                buffer.removeSubrange(..<range.upperBound)
                let parts = head.prefix { $0 != "\r" }.split(separator: " ")
                return parts.count > 1 ? String(parts[1]) : ""
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            buffer += chunk[..<count]
        }
    }

    /// Writes all of `bytes`; false once the client is gone (`MSG_NOSIGNAL`: no SIGPIPE).
    private func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }
}

extension CraftedHTTPServer.Reply {
    /// A `200` whose head declares `declaredLength` body bytes, followed by `body` (however long it really is).
    static func lying(declaredLength: Int, body: [UInt8], ending: CraftedHTTPServer.Ending) -> Self {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: \(declaredLength)\r\n\r\n"
        return .raw(Array(head.utf8) + body, ending: ending)
    }
}

extension GalleryFixture {
    /// What the gallery itself answers for `target` (the feed, each item once; an image's bytes; a 404), so a
    /// crafted server can serve the gallery's content and misbehave only where a test says so.
    func reply(for target: String) -> CraftedHTTPServer.Reply {
        if target == "/gallery/images", let feed = try? JSONEncoder().encode(server.uniqueItems) {
            return .respond(status: 200, headers: [("Content-Type", "application/json")], body: Array(feed))
        }
        if target.hasPrefix("/gallery/image?"), let n = Int(target.dropFirst("/gallery/image?".count)), (1...count).contains(n) {
            return .respond(status: 200, headers: [("Content-Type", "image/png")], body: server.imageBytes(n))
        }
        return .respond(status: 404, body: Array(#"{"error": "File not found."}"#.utf8))
    }
}

/// A flag a test flips while a server's handler (on another thread) reads it.
final class Flag: Sendable {
    private let value: Atomic<Bool>
    init(_ initial: Bool) { value = Atomic(initial) }
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set(_ newValue: Bool) { value.store(newValue, ordering: .releasing) }
}
