import POSIXThreads
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The tests' one HTTP/1.1 server for crafted replies: raw POSIX sockets on a loopback address, one thread per
/// connection.
///
/// It exists so tests control the bytes exactly (a `Content-Length` that lies, a body that never ends, a request
/// that is never answered, a reset in the middle of a body, a redirect to another host) and can observe the
/// client from the other end of the wire: how many connections it opened, how many were open at once, whether it
/// hung up. Replies keep the connection alive unless the reply says otherwise. It is not built on `EmbeddedHTTP`:
/// that server writes only well-formed responses, and these replies are the ones it must never send. Well-formed
/// test servers use `EmbeddedHTTP` (the bundled gallery does).
public final class TestHTTPServer: Sendable {
    /// What the server does with one request.
    public enum Reply: Sendable {
        /// Answers with `status`, extra `headers` and `body` (a `Content-Length` is added),
        /// after waiting `delayMilliseconds`; the connection stays open for the next request.
        case respond(status: Int, headers: [(String, String)] = [], body: [UInt8] = [], delayMilliseconds: Int = 0)
        /// Reads the request and never answers; waits for the client to hang up.
        case silent
        /// Declares `declaredLength` bytes, sends `sentBytes` of them, then closes.
        case truncated(declaredLength: Int, sentBytes: Int)
        /// Sends a body without length until the client hangs up.
        case endless
        /// Declares a `contentLength`-byte body, sends none of it, waits for the client to hang up.
        case headersOnly(contentLength: Int)
        /// Takes the `Upgrade: h2c` the request offers (`101 Switching Protocols`) and answers the request in
        /// HTTP/2, as its stream 1: the server's `SETTINGS`, a `HEADERS` frame saying `:status: 200` and `body`
        /// in a `DATA` frame that ends the stream; then waits for the client to hang up. Only the upgraded
        /// request is answered: later ones would come as HPACK-coded frames this server does not read.
        case switchToHTTP2(body: [UInt8])
        /// Exactly `bytes` (status line, headers and whatever body), then the connection ends as `ending` says.
        case raw([UInt8], ending: Ending)

        /// A `200` whose head declares `declaredLength` body bytes, followed by `body` (however long it really is).
        public static func lying(declaredLength: Int, body: [UInt8], ending: Ending) -> Reply {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: \(declaredLength)\r\n\r\n"
            return .raw(Array(head.utf8) + body, ending: ending)
        }
    }

    /// How a `.raw` reply ends its connection.
    public enum Ending: Sendable {
        /// An orderly close (FIN).
        case close
        /// A reset (RST): `SO_LINGER` with a zero timeout, then `close`.
        case reset
    }

    /// One parsed request.
    public struct Request: Sendable {
        /// The request line's method, such as `GET`.
        public let method: String
        /// The request target, such as `/gallery/image?3`.
        public let target: String
        /// Header fields with lower-cased names.
        public let headers: [String: String]
    }

    private struct Connection {
        let fd: Int32
        var closed = false
    }

    private struct State {
        var stopping = false
        var acceptThread: JoinableThread?
        var connectionThreads: [JoinableThread] = []
        var connections: [Int: Connection] = [:]
        var nextConnection = 0
        var acceptedConnections = 0
        var openConnections = 0
        var peakOpenConnections = 0
        var requests: [Request] = []
        var endedUnboundedReplies = 0
        var bytesSentInUnboundedReplies = 0
    }

    /// The address it listens on, e.g. `127.0.0.1`.
    public let host: String
    /// The port it listens on.
    public let port: Int
    private let listener: Int32
    private let handler: @Sendable (Request) -> Reply
    private let greeting: [UInt8]
    private let state = Mutex(State())

    /// Starts listening on `host` (an IPv4 loopback address) at a free port and answers every request with
    /// `handler`. A non-empty `greeting` is written to each connection as soon as it is accepted, before any
    /// request (to play a server that speaks the wrong protocol).
    public init(host: String = "127.0.0.1", greeting: [UInt8] = [], handler: @escaping @Sendable (Request) -> Reply) throws {
        let (listener, port) = try LoopbackListener.listen(host: host, backlog: 128)
        self.host = host
        self.listener = listener
        self.port = port
        self.handler = handler
        self.greeting = greeting
        let thread = try JoinableThread.start(name: "test-http") { [self] in acceptLoop() }
        state.withLock { $0.acceptThread = thread }
    }

    /// `http://HOST:PORT`: the agent's `--server`.
    public var origin: String { "http://\(host):\(port)" }

    /// `http://HOST:PORT` followed by `path`.
    public func url(_ path: String) -> String { origin + path }


    /// Connections accepted so far.
    public var acceptedConnections: Int { state.withLock { $0.acceptedConnections } }
    /// Connections currently open (the client has not hung up yet).
    public var openConnections: Int { state.withLock { $0.openConnections } }
    /// The most connections that were open at once.
    public var peakOpenConnections: Int { state.withLock { $0.peakOpenConnections } }
    /// Every request received, in order.
    public var requests: [Request] { state.withLock { $0.requests } }
    /// `.endless` replies that ended because the client stopped reading or hung up.
    public var endedUnboundedReplies: Int { state.withLock { $0.endedUnboundedReplies } }
    /// Body bytes written by `.endless` replies before the client hung up.
    public var bytesSentInUnboundedReplies: Int { state.withLock { $0.bytesSentInUnboundedReplies } }

    /// Every request target received, in order.
    public var targets: [String] { requests.map(\.target) }

    /// How many requests had `target`.
    public func requestCount(_ target: String) -> Int {
        state.withLock { $0.requests.filter { $0.target == target }.count }
    }

    /// Closes the listener and every connection, and waits for every thread to end. Idempotent.
    public func stop() {
        let acceptThread = state.withLock { state -> JoinableThread? in
            state.stopping = true
            for connection in state.connections.values where !connection.closed {
                shutdown(connection.fd, Int32(SHUT_RDWR))
            }
            defer { state.acceptThread = nil }
            return state.acceptThread
        }
        guard let acceptThread else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        acceptThread.join()
        close(listener)
        let threads = state.withLock { state in
            defer { state.connectionThreads.removeAll() }
            return state.connectionThreads
        }
        for thread in threads { thread.join() }
    }

    deinit {
        stop()
    }

    // MARK: - Server side

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)  // not inherited by the agents a test starts
            let accepted = state.withLock { state -> Int? in
                guard !state.stopping else { return nil }
                let id = state.nextConnection
                state.nextConnection += 1
                state.connections[id] = Connection(fd: fd)
                state.acceptedConnections += 1
                state.openConnections += 1
                state.peakOpenConnections = max(state.peakOpenConnections, state.openConnections)
                return id
            }
            guard let id = accepted else {
                close(fd)
                return
            }
            let closeConnection: @Sendable () -> Void = { [self] in
                state.withLock { state in
                    close(fd)
                    state.connections[id]?.closed = true
                    state.openConnections -= 1
                }
            }
            // Without a thread to serve it, the connection is closed at once: the client's request fails,
            // and with it the test that made it.
            guard let thread = try? JoinableThread.start(name: "test-http", { [self] in
                serve(fd: fd)
                closeConnection()
            }) else {
                closeConnection()
                continue
            }
            state.withLock { $0.connectionThreads.append(thread) }
        }
    }

    private func serve(fd: Int32) {
        if !greeting.isEmpty { _ = send(fd, greeting) }
        var buffer: [UInt8] = []
        while let request = readRequest(fd: fd, buffer: &buffer) {
            state.withLock { $0.requests.append(request) }
            switch handler(request) {
            case .respond(let status, let headers, let body, let delay):
                if delay > 0 { usleep(UInt32(delay) * 1000) }
                var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\nContent-Length: \(body.count)\r\n"
                for (name, value) in headers { head += "\(name): \(value)\r\n" }
                head += "\r\n"
                guard send(fd, Array(head.utf8) + body) else { return }
            case .silent:
                waitForHangUp(fd: fd)
                return
            case .truncated(let declared, let sent):
                let head = "HTTP/1.1 200 OK\r\nContent-Length: \(declared)\r\n\r\n"
                _ = send(fd, Array(head.utf8) + [UInt8](repeating: 0x61, count: sent))
                return
            case .endless:
                _ = send(fd, Array("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".utf8))
                let chunk = [UInt8](repeating: 0x62, count: 16 * 1024)
                var total = 0
                while send(fd, chunk) { total += chunk.count }
                state.withLock { state in
                    state.endedUnboundedReplies += 1
                    state.bytesSentInUnboundedReplies += total
                }
                return
            case .headersOnly(let length):
                _ = send(fd, Array("HTTP/1.1 200 OK\r\nContent-Length: \(length)\r\n\r\n".utf8))
                waitForHangUp(fd: fd)
                return
            case .switchToHTTP2(let body):
                let switching = Array("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n".utf8)
                let settings = Self.http2Frame(type: 0x4, flags: 0, stream: 0, payload: [])
                // 0x88: HPACK's static table entry 8, `:status: 200` (RFC 7541, appendix A).
                let headers = Self.http2Frame(type: 0x1, flags: 0x4 /* END_HEADERS */, stream: 1, payload: [0x88])
                let data = Self.http2Frame(type: 0x0, flags: 0x1 /* END_STREAM */, stream: 1, payload: body)
                _ = send(fd, switching + settings + headers + data)
                waitForHangUp(fd: fd)
                return
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

    /// Reads one request head (up to the blank line); `nil` when the client hung up.
    private func readRequest(fd: Int32, buffer: inout [UInt8]) -> Request? {
        let terminator: [UInt8] = Array("\r\n\r\n".utf8)
        while true {
            if let end = Self.find(terminator, in: buffer) {
                let head = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeFirst(end + terminator.count)
                let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
                let parts = lines.first.map { $0.split(separator: " ") } ?? []
                var headers: [String: String] = [:]
                for line in lines.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    let value = line[line.index(after: colon)...].drop { $0 == " " }
                    headers[line[..<colon].lowercased()] = String(value)
                }
                return Request(
                    method: parts.count > 0 ? String(parts[0]) : "",
                    target: parts.count > 1 ? String(parts[1]) : "",
                    headers: headers)
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            buffer += chunk[..<count]
        }
    }

    /// Blocks until the client closes the connection (or `stop` shuts it down).
    private func waitForHangUp(fd: Int32) {
        var scratch = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = scratch.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return }
        }
    }

    /// Writes all of `bytes`; `false` once the client is gone. `MSG_NOSIGNAL`: no SIGPIPE.
    private func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// One HTTP/2 frame (RFC 9113, section 4.1): a 24-bit length, the type, the flags, the stream id, the payload.
    private static func http2Frame(type: UInt8, flags: UInt8, stream: UInt32, payload: [UInt8]) -> [UInt8] {
        let length = UInt32(payload.count)
        return [UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length),
                type, flags,
                UInt8(truncatingIfNeeded: stream >> 24), UInt8(truncatingIfNeeded: stream >> 16),
                UInt8(truncatingIfNeeded: stream >> 8), UInt8(truncatingIfNeeded: stream)] + payload
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start..<start + needle.count].elementsEqual(needle) {
            return start
        }
        return nil
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 302: "Found"
        case 404: "Not Found"
        case 500: "Internal Server Error"
        default: "Status"
        }
    }
}
