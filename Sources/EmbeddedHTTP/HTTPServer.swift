import Dispatch
import HTTPTypes
import POSIXThreads
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A small HTTP/1.1 server on POSIX sockets for what this package serves itself: the bundled gallery and the
/// opt-in metrics endpoint. One thread waits on every connection in `poll(2)` (``ConnectionLoop``) and a few
/// handler threads answer whole requests with blocking writes, so a slow client slows only its own response
/// and a handler may simply sleep. ``HTTPServerLimits`` bounds connections, threads and how long a client may
/// take. Keep-alive and pipelining; request bodies by `Content-Length` only; responses whole or streamed
/// (announced length, or chunked).
///
/// It exists so the first build does not compile an event-loop stack for two loopback endpoints (see
/// docs/BENCHMARKS.md, first build). Not a general web server: no TLS, no HTTP/2, no request body streaming.
///
/// Owns its listening socket, its threads and its connections; ``stop(gracePeriod:)`` ends them all and waits
/// until every thread it started is done.
public final class HTTPServer: Sendable {
    /// Answers one request, on a handler thread.
    public typealias Handler = @Sendable (HTTPServerRequest) -> HTTPServerResponse

    /// The name a server's threads carry unless it is given another (`/proc/PID/task/*/comm`, `top -H`).
    public static let defaultThreadName = "embedded-http"
    /// The name every thread of this server carries (at most 15 bytes are kept by the kernel): one per kind of
    /// server tells them apart in `top -H`, and lets a test count one server's threads among others'.
    public let threadName: String

    private let host: String
    private let requestedPort: Int
    private let handler: Handler
    private let maximumHeadSize: Int
    private let maximumBodySize: Int
    /// The limits it was made with.
    public let limits: HTTPServerLimits
    private let state = Mutex(State())
    /// Counts queued jobs (plus one per handler thread at stop); handler threads wait on it.
    private let jobsQueued = DispatchSemaphore(value: 0)

    private struct State {
        var phase = Phase.idle
        var listener: Int32 = -1
        /// The wake pipe's ends: the event loop polls the first, anyone writes to the second.
        var wakeRead: Int32 = -1
        var wake: Int32 = -1
        var loopThread: JoinableThread?
        var handlerThreads: [JoinableThread] = []
        /// Handler threads waiting for a job.
        var idleHandlers = 0
        var jobs: [ServerJob] = []
        /// Connections being answered, by id, so that stop can cut them.
        var answering: [Int: ConnectedSocket] = [:]
        /// Answered keep-alive connections on their way back to the event loop.
        var returned: [ServerConnection] = []
        /// Every connection accepted and not yet closed, wherever it is.
        var openConnections = 0
        /// Set at the end of stop: handler threads leave when they find no job.
        var handlersLeave = false
    }

    private enum Phase { case idle, running, stopping, stopped }

    /// Makes a server; nothing is bound until ``start()``.
    /// - Parameters:
    ///   - maximumHeadSize: a longer request head is answered `431` and the connection closed.
    ///   - maximumBodySize: a longer request body is answered `413` and the connection closed.
    ///   - limits: connections, threads and timeouts.
    ///   - threadName: what its threads are called.
    public init(
        host: String, port: Int, maximumHeadSize: Int = 16 * 1024, maximumBodySize: Int = 1 << 20,
        limits: HTTPServerLimits = HTTPServerLimits(), threadName: String = HTTPServer.defaultThreadName,
        handler: @escaping Handler
    ) {
        self.threadName = threadName
        self.host = host
        self.requestedPort = port
        self.maximumHeadSize = maximumHeadSize
        self.maximumBodySize = maximumBodySize
        self.limits = limits
        self.handler = handler
    }

    /// Binds, listens and starts accepting; returns the bound port (the kernel's choice when the port was 0).
    public func start() throws(HTTPServerError) -> Int {
        try state.withLock { state throws(HTTPServerError) in
            guard state.phase == .idle else { throw HTTPServerError(.invalidState, "the server was started before") }
            state.phase = .running
        }
        let (fd, port) = try ListeningSocket.open(host: host, port: requestedPort)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        // The wake pipe: a byte written to it brings the event loop out of poll(2).
        var wakePipe: [Int32] = [-1, -1]
        guard pipe(&wakePipe) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw HTTPServerError(.cannotListen, "pipe: \(reason)")
        }
        for end in wakePipe {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        let loop = ConnectionLoop(
            server: self, listener: fd, wake: wakePipe[0], limits: limits, maximumHeadSize: maximumHeadSize,
            maximumBodySize: maximumBodySize)
        let thread: JoinableThread
        do {
            thread = try JoinableThread.start(name: threadName, handing: loop) { $0.run() }
        } catch {
            for descriptor in [fd] + wakePipe { Glibc.close(descriptor) }
            throw HTTPServerError(.cannotListen, error.description)
        }
        state.withLock { state in
            state.listener = fd
            state.wakeRead = wakePipe[0]
            state.wake = wakePipe[1]
            state.loopThread = thread
        }
        return port
    }

    /// Whether ``stop(gracePeriod:)`` has begun: a streamed body that could run forever should end.
    public var isStopping: Bool {
        state.withLock { $0.phase == .stopping || $0.phase == .stopped }
    }

    /// Connections open now (waiting for a request, queued or being answered).
    public var openConnections: Int { state.withLock { $0.openConnections } }

    /// Stops accepting, closes idle connections at once, lets responses in progress finish for up to
    /// `gracePeriod`, then cuts whatever is left, and returns once every thread of the server has ended.
    /// Idempotent. The blocking part runs on a thread of its own, not on the caller's executor.
    public func stop(gracePeriod: Duration = .seconds(5)) async {
        let waiter = Mutex<JoinableThread?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            do {
                let thread = try JoinableThread.start(name: threadName) { [self] in
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
        let started: (loop: JoinableThread?, descriptors: [Int32])? = state.withLock { state in
            guard state.phase == .running || state.phase == .idle else { return nil }
            state.phase = .stopping
            return (state.loopThread, [state.listener, state.wakeRead, state.wake])
        }
        guard let started else {
            waitUntilStopped()
            return
        }
        if let loop = started.loop {
            wakeLoop(started.descriptors[2])
            loop.join()  // it closes every connection that waits for a request
            for descriptor in started.descriptors { Glibc.close(descriptor) }
        }
        let deadline = ContinuousClock.now.advanced(by: gracePeriod)
        while ContinuousClock.now < deadline, state.withLock({ !$0.answering.isEmpty || !$0.jobs.isEmpty }) {
            usleep(10_000)
        }
        let (left, queued) = state.withLock { state in
            let queued = state.jobs
            state.jobs = []
            return (Array(state.answering.values), queued)
        }
        for job in queued { close(job.connection) }
        for socket in left { socket.shutdown() }
        // Every socket is shut down, so each handler thread is at most one handler call from its end.
        let handlers = state.withLock { state in
            state.handlersLeave = true
            return state.handlerThreads
        }
        for _ in handlers { jobsQueued.signal() }
        for thread in handlers { thread.join() }
        state.withLock { $0.phase = .stopped }
    }

    /// A second `stop` waits for the first one to finish.
    private func waitUntilStopped() {
        while state.withLock({ $0.phase != .stopped }) { usleep(10_000) }
    }

    private func wakeLoop(_ wake: Int32) {
        var one: UInt8 = 1
        _ = write(wake, &one, 1)  // a full pipe already wakes it
    }

    // MARK: - For the event loop

    /// Counts a connection the event loop accepted.
    func opened() {
        state.withLock { $0.openConnections += 1 }
    }

    /// Closes a connection for good.
    func close(_ connection: ServerConnection) {
        connection.socket.close()
        state.withLock { $0.openConnections -= 1 }
    }

    /// The answered connections to wait on again, or nil once the server is stopping.
    func takeReturned() -> [ServerConnection]? {
        // (Taken with an explicit swap, not `defer { state.returned = [] }`: a `defer` that reassigns the locked
        // value after the return expression was miscompiled in a release build; see WatchBacklog.take().)
        let (running, taken) = state.withLock { state in
            let taken = state.returned
            state.returned = []
            return (state.phase == .running, taken)
        }
        guard running else {
            // Connections handed back meanwhile are closed here; later ones by their handler thread.
            for connection in taken { close(connection) }
            return nil
        }
        return taken
    }

    /// Queues a request for a handler thread, starting one when all are busy and the limit allows.
    func dispatch(_ job: ServerJob) {
        let startHandler = state.withLock { state in
            state.jobs.append(job)
            guard state.idleHandlers < state.jobs.count, state.handlerThreads.count < limits.handlerThreads else {
                return false
            }
            state.idleHandlers += 1  // counted at once, so the next dispatch does not start another one for it
            return true
        }
        if startHandler {
            do {
                let thread = try JoinableThread.start(name: threadName) { [self] in answerJobs(countedIdle: true) }
                state.withLock { $0.handlerThreads.append(thread) }
            } catch {
                state.withLock { $0.idleHandlers -= 1 }  // the threads there are will take it
            }
        }
        jobsQueued.signal()
    }

    // MARK: - Handler threads

    private func answerJobs(countedIdle: Bool) {
        var idleCounted = countedIdle
        while true {
            if !idleCounted { state.withLock { $0.idleHandlers += 1 } }
            jobsQueued.wait()
            let job: ServerJob? = state.withLock { state in
                state.idleHandlers -= 1
                guard !state.jobs.isEmpty else { return nil }
                let job = state.jobs.removeFirst()
                state.answering[job.connection.id] = job.connection.socket
                return job
            }
            idleCounted = false
            guard let job else {
                if state.withLock({ $0.handlersLeave }) { return }
                continue
            }
            let keep = answer(job)
            let handBack = state.withLock { state in
                state.answering[job.connection.id] = nil
                guard keep, state.phase == .running else { return false }
                state.returned.append(job.connection)
                return true
            }
            if handBack {
                let wake = state.withLock { $0.wake }
                wakeLoop(wake)
            } else {
                close(job.connection)
            }
        }
    }

    /// Writes the job's answer; returns whether the connection may carry another request.
    private func answer(_ job: ServerJob) -> Bool {
        switch job.work {
        case .incomplete:
            return false
        case .refuse(let status, let reason):
            let body = Array("\(reason)\n".utf8)
            let response = HTTPServerResponse(status: status, headerFields: [.contentType: "text/plain; charset=utf-8"], body: .bytes(body))
            _ = HTTPResponseWriter.write(response, to: job.connection.socket, keepAlive: false, headOnly: false, stopping: { true })
            return false
        case .request(let request, let keepAlive):
            let response = handler(request)
            let written = HTTPResponseWriter.write(
                response, to: job.connection.socket, keepAlive: keepAlive, headOnly: request.head.method == .head,
                stopping: { [self] in isStopping })
            return written && keepAlive
        }
    }
}
