#if canImport(Glibc)
import Glibc
#endif

/// The server's event loop: one thread waits in `poll(2)` on the listening socket, a wake descriptor and
/// every connection that is waiting for a request, reads what arrives, and hands each whole request to the
/// handler threads. It enforces ``HTTPServerLimits``: the connection cap (closing the connection that has
/// waited longest when one more arrives), the request timeout and the idle timeout.
///
/// Confined to its thread (handed over at start, so not `Sendable`): the connections it holds are its own; the
/// server hands answered keep-alive connections back through ``HTTPServer/takeReturned()``.
final class ConnectionLoop {
    private struct Waiting {
        var connection: ServerConnection
        /// When it is closed unless a whole request has arrived.
        var deadline: ContinuousClock.Instant
        /// When it began to wait: the oldest is closed first to make room.
        var since: ContinuousClock.Instant
    }

    private let server: HTTPServer
    private let listener: Int32
    private let wake: Int32
    private let limits: HTTPServerLimits
    private let maximumHeadSize: Int
    private let maximumBodySize: Int
    private let clock = ContinuousClock()
    private var waiting: [Int: Waiting] = [:]
    private var nextID = 0
    /// After `EMFILE` and the like, the listener rests until then (it would stay readable and spin).
    private var acceptResumes: ContinuousClock.Instant?

    init(server: HTTPServer, listener: Int32, wake: Int32, limits: HTTPServerLimits, maximumHeadSize: Int, maximumBodySize: Int) {
        self.server = server
        self.listener = listener
        self.wake = wake
        self.limits = limits
        self.maximumHeadSize = maximumHeadSize
        self.maximumBodySize = maximumBodySize
    }

    /// Runs until the server stops; then closes every connection it holds.
    func run() {
        while true {
            let now = clock.now
            if let resumes = acceptResumes, resumes <= now { acceptResumes = nil }
            var entries = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            if acceptResumes == nil { entries.append(pollfd(fd: listener, events: Int16(POLLIN), revents: 0)) }
            let ids = Array(waiting.keys)
            for id in ids { entries.append(pollfd(fd: waiting[id]!.connection.socket.fd, events: Int16(POLLIN), revents: 0)) }
            var nearest = waiting.values.map(\.deadline).min()
            if let resumes = acceptResumes { nearest = min(nearest ?? resumes, resumes) }
            let timeout = nearest.map { now.duration(to: $0).pollMilliseconds } ?? -1
            let ready = poll(&entries, nfds_t(entries.count), timeout)
            if ready < 0 && errno != EINTR { usleep(10_000) }  // ENOMEM: try again shortly
            if entries[0].revents != 0 {
                var drained = [UInt8](repeating: 0, count: 64)
                while Glibc.read(wake, &drained, drained.count) > 0 {}
            }
            guard let returned = server.takeReturned() else {
                for entry in waiting.values { server.close(entry.connection) }
                waiting = [:]
                return
            }
            for connection in returned { wait(for: connection, fresh: false) }
            let connectionsStart = acceptResumes == nil && entries.count > 1 ? 2 : 1
            if ready > 0 {
                for (offset, id) in ids.enumerated() where entries[connectionsStart + offset].revents != 0 {
                    read(id)
                }
            }
            closeExpired()
            if connectionsStart == 2 && entries[1].revents != 0 { acceptAll() }
        }
    }

    /// Takes a connection into the wait set, or hands it on at once when its buffer already holds a request.
    private func wait(for connection: ServerConnection, fresh: Bool) {
        let now = clock.now
        let timeout = fresh || connection.reader.hasPartialRequest ? limits.requestTimeout : limits.idleTimeout
        waiting[connection.id] = Waiting(connection: connection, deadline: now.advanced(by: timeout), since: now)
        if connection.reader.hasPartialRequest { parse(connection.id) }
    }

    private func read(_ id: Int) {
        guard var entry = waiting[id] else { return }
        let wasIdle = !entry.connection.reader.hasPartialRequest
        var received = ConnectedSocket.Received.bytes
        // Bounded: a client sending without end is refused once the head limit is passed.
        while received == .bytes && entry.connection.reader.bufferedCount <= maximumHeadSize + maximumBodySize {
            received = entry.connection.reader.receive(from: entry.connection.socket)
        }
        if wasIdle && entry.connection.reader.hasPartialRequest {
            entry.deadline = clock.now.advanced(by: limits.requestTimeout)
        }
        waiting[id] = entry
        parse(id)  // a request sent before the client closed its side (`shutdown(SHUT_WR)`) is still answered
        if received == .closed, let left = waiting.removeValue(forKey: id) {
            server.close(left.connection)
        }
    }

    private func parse(_ id: Int) {
        guard var entry = waiting[id] else { return }
        let outcome = entry.connection.reader.next()
        if case .incomplete = outcome {
            waiting[id] = entry
            return
        }
        waiting[id] = nil
        server.dispatch(ServerJob(connection: entry.connection, work: outcome))
    }

    private func closeExpired() {
        let now = clock.now
        for (id, entry) in waiting where entry.deadline <= now {
            waiting[id] = nil
            server.close(entry.connection)
        }
    }

    private func acceptAll() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                switch errno {
                case EINTR, ECONNABORTED: continue
                case EAGAIN, EWOULDBLOCK: return
                default:
                    // EMFILE, ENFILE, ENOBUFS, ENOMEM: the backlog holds the client meanwhile.
                    acceptResumes = clock.now.advanced(by: .milliseconds(50))
                    return
                }
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)  // no accept4 in Swift's Glibc: no child inherits it
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            // Each response's last write goes out at once: with Nagle's algorithm it would wait for the
            // client's delayed ACK of the previous one (40 ms on Linux).
            var one: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let socket = ConnectedSocket(fd: fd, sendTimeout: limits.sendTimeout)
            guard makeRoom() else {
                socket.close()  // every connection is being answered: refuse this one
                continue
            }
            nextID += 1
            server.opened()
            let connection = ServerConnection(
                id: nextID, socket: socket,
                reader: HTTPRequestReader(maximumHeadSize: maximumHeadSize, maximumBodySize: maximumBodySize))
            wait(for: connection, fresh: true)
            // A client that sent its request with the connection (most do) has it read now, before a flood of
            // later connections could make this one the oldest and close it.
            read(connection.id)
        }
    }

    /// Below the cap, or brought below it by closing the connection that has waited longest without a whole
    /// request (read first: bytes that complete a request save it). False when every connection is being
    /// answered.
    private func makeRoom() -> Bool {
        while server.openConnections >= limits.maximumConnections {
            guard let oldest = waiting.min(by: { $0.value.since < $1.value.since })?.key else { return false }
            read(oldest)
            if let entry = waiting.removeValue(forKey: oldest) { server.close(entry.connection) }
        }
        return true
    }
}
