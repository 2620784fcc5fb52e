import HTTPTypes
import POSIXThreads
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A small HTTP/1.1 server on POSIX sockets for what this package serves itself: the bundled gallery and the
/// opt-in metrics endpoint. One thread accepts; each connection gets a thread of its own with blocking I/O, so
/// a slow client slows only its own writer and a handler may simply sleep. Keep-alive and pipelining;
/// request bodies by `Content-Length` only; responses whole or streamed (announced length, or chunked).
///
/// It exists so the first build does not compile an event-loop stack for two loopback endpoints (see
/// docs/BENCHMARKS.md, first build). Not a general web server: no TLS, no HTTP/2, no request body streaming.
///
/// Owns its listening socket, its threads and its connections; ``stop(gracePeriod:)`` ends them all and waits
/// until every thread it started is done.
public final class HTTPServer: Sendable {
    /// Answers one request, on the connection's thread.
    public typealias Handler = @Sendable (HTTPServerRequest) -> HTTPServerResponse

    /// The name every thread of a server carries (`/proc/PID/task/*/comm`, `top -H`).
    public static let threadName = "embedded-http"

    private let host: String
    private let requestedPort: Int
    private let handler: Handler
    private let maximumHeadSize: Int
    private let maximumBodySize: Int
    private let state = Mutex(State())

    private struct Connection {
        var socket: ConnectedSocket
        var busy: Bool
    }

    private struct State {
        var phase = Phase.idle
        var listener: Int32 = -1
        var acceptThread: JoinableThread?
        var nextID = 0
        var connections: [Int: Connection] = [:]
        /// Connection threads started and not yet at their last instruction.
        var connectionThreads = 0
    }

    private enum Phase { case idle, running, stopping, stopped }

    /// Makes a server; nothing is bound until ``start()``.
    /// - Parameters:
    ///   - maximumHeadSize: a longer request head is answered `431` and the connection closed.
    ///   - maximumBodySize: a longer request body is answered `413` and the connection closed.
    public init(host: String, port: Int, maximumHeadSize: Int = 16 * 1024, maximumBodySize: Int = 1 << 20, handler: @escaping Handler) {
        self.host = host
        self.requestedPort = port
        self.maximumHeadSize = maximumHeadSize
        self.maximumBodySize = maximumBodySize
        self.handler = handler
    }

    /// Binds, listens and starts accepting; returns the bound port (the kernel's choice when the port was 0).
    public func start() throws(HTTPServerError) -> Int {
        try state.withLock { state throws(HTTPServerError) in
            guard state.phase == .idle else { throw HTTPServerError(.invalidState, "the server was started before") }
            state.phase = .running
        }
        let (fd, port) = try ListeningSocket.open(host: host, port: requestedPort)
        let thread: JoinableThread
        do {
            thread = try JoinableThread.start(name: Self.threadName) { [self] in acceptLoop(listener: fd) }
        } catch {
            close(fd)
            throw HTTPServerError(.cannotListen, error.description)
        }
        state.withLock { state in
            state.listener = fd
            state.acceptThread = thread
        }
        return port
    }

    /// Whether ``stop(gracePeriod:)`` has begun: a streamed body that could run forever should end.
    public var isStopping: Bool {
        state.withLock { $0.phase == .stopping || $0.phase == .stopped }
    }

    /// Stops accepting, closes idle connections at once, lets responses in progress finish for up to
    /// `gracePeriod`, then cuts whatever is left, and returns once every thread of the server has ended.
    /// Idempotent. The blocking part runs on a thread of its own, not on the caller's executor.
    public func stop(gracePeriod: Duration = .seconds(5)) async {
        let waiter = Mutex<JoinableThread?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            do {
                let thread = try JoinableThread.start(name: Self.threadName) { [self] in
                    stopBlocking(gracePeriod: gracePeriod)
                    continuation.resume()
                }
                waiter.withLock { $0 = thread }
            } catch {
                stopBlocking(gracePeriod: gracePeriod)
                continuation.resume()
            }
        }
        waiter.withLock { $0 }?.join()
    }

    private func stopBlocking(gracePeriod: Duration) {
        let listener: Int32? = state.withLock { state in
            guard state.phase == .running || state.phase == .idle else { return nil }
            let wasRunning = state.phase == .running
            state.phase = .stopping
            for connection in state.connections.values where !connection.busy {
                connection.socket.shutdown()
            }
            return wasRunning ? state.listener : -1
        }
        guard let listener else {
            waitUntilStopped()
            return
        }
        if listener >= 0 {
            _ = shutdown(listener, Int32(SHUT_RDWR))  // wakes the accept loop
        }
        state.withLock { $0.acceptThread }?.join()
        if listener >= 0 { close(listener) }
        let deadline = ContinuousClock.now.advanced(by: gracePeriod)
        while ContinuousClock.now < deadline, state.withLock({ !$0.connections.isEmpty }) {
            usleep(10_000)
        }
        let left = state.withLock { state in state.connections.values.map(\.socket) }
        for socket in left { socket.shutdown() }
        // Every socket is shut down, so each connection thread is at most one handler call from its end.
        while state.withLock({ $0.connectionThreads > 0 }) { usleep(1_000) }
        state.withLock { $0.phase = .stopped }
    }

    /// A second `stop` waits for the first one to finish.
    private func waitUntilStopped() {
        while state.withLock({ $0.phase != .stopped }) { usleep(10_000) }
    }

    // MARK: - Accepting

    private func acceptLoop(listener: Int32) {
        while true {
            let fd = accept(listener, nil, nil)
            if fd >= 0 {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)  // no accept4 in Swift's Glibc: no child inherits it
                // Each response's last write goes out at once: with Nagle's algorithm it would wait for the
                // client's delayed ACK of the previous one (40 ms on Linux).
                var one: Int32 = 1
                _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            }
            if fd < 0 {
                if isStopping { return }
                switch errno {
                case EINTR, ECONNABORTED: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM: usleep(50_000); continue  // the backlog holds the client meanwhile
                default: return
                }
            }
            let socket = ConnectedSocket(fd: fd)
            let id: Int? = state.withLock { state in
                guard state.phase == .running else { return nil }
                state.nextID += 1
                state.connections[state.nextID] = Connection(socket: socket, busy: false)
                state.connectionThreads += 1
                return state.nextID
            }
            guard let id else {
                socket.close()
                return
            }
            do {
                try JoinableThread.startDetached(name: Self.threadName) { [self] in serve(socket, id: id) }
            } catch {
                state.withLock { state in
                    state.connections[id] = nil
                    state.connectionThreads -= 1
                }
                socket.close()
            }
        }
    }

    // MARK: - One connection

    private func serve(_ socket: ConnectedSocket, id: Int) {
        var reader = HTTPRequestReader(maximumHeadSize: maximumHeadSize, maximumBodySize: maximumBodySize)
        connection: while true {
            switch reader.next(from: socket) {
            case .closed:
                break connection
            case .refuse(let status, let reason):
                setBusy(id, true)
                let body = Array("\(reason)\n".utf8)
                let response = HTTPServerResponse(status: status, headerFields: [.contentType: "text/plain; charset=utf-8"], body: .bytes(body))
                _ = HTTPResponseWriter.write(response, to: socket, keepAlive: false, headOnly: false, stopping: { true })
                break connection
            case .request(let request, let keepAlive):
                guard setBusy(id, true) else { break connection }
                let response = handler(request)
                let written = HTTPResponseWriter.write(
                    response, to: socket, keepAlive: keepAlive, headOnly: request.head.method == .head,
                    stopping: { [self] in isStopping })
                guard written, keepAlive, setBusy(id, false) else { break connection }
            }
        }
        socket.close()
        state.withLock { state in
            state.connections[id] = nil
            state.connectionThreads -= 1
        }
    }

    /// Marks connection `id` busy (a request is being answered) or idle; returns false when the server is
    /// stopping, so the connection ends instead of waiting for another request.
    @discardableResult
    private func setBusy(_ id: Int, _ busy: Bool) -> Bool {
        state.withLock { state in
            state.connections[id]?.busy = busy
            return state.phase == .running
        }
    }
}
