/// How much of the process one ``HTTPServer`` may take, and how long it waits for a client.
///
/// A connection costs one descriptor and a small buffer, never a thread: one thread waits on every connection
/// in `poll(2)`, and at most ``handlerThreads`` threads run handlers. So a client that connects and sends half a
/// request (a slowloris) holds a descriptor for at most ``requestTimeout``, and a few hundred of them change
/// neither the thread count nor the time a real request waits (docs/RELIABILITY.md has the measurements).
public struct HTTPServerLimits: Sendable {
    /// Connections open at once. When one more arrives, the connection that has waited longest for its next
    /// request is closed to make room; when every connection is being answered, the new one is closed at once.
    public var maximumConnections: Int
    /// Threads that run handlers and write responses, started as needed up to this number. A request that
    /// arrives while all are busy waits in a queue, its connection counted in ``maximumConnections``.
    public var handlerThreads: Int
    /// From a connection's first byte of a request (or from its accept) to the request's end, head and body:
    /// a client slower than this is disconnected without an answer.
    public var requestTimeout: Duration
    /// How long a keep-alive connection may wait for its next request before the server closes it.
    public var idleTimeout: Duration
    /// How long one write may wait for a client that does not read before the response is abandoned.
    public var sendTimeout: Duration

    /// Creates limits; the defaults suit a loopback service with a handful of clients.
    public init(
        maximumConnections: Int = 64, handlerThreads: Int = 8, requestTimeout: Duration = .seconds(5),
        idleTimeout: Duration = .seconds(60), sendTimeout: Duration = .seconds(30)
    ) {
        precondition(maximumConnections > 0 && handlerThreads > 0, "a server needs a connection and a thread")
        self.maximumConnections = maximumConnections
        self.handlerThreads = handlerThreads
        self.requestTimeout = requestTimeout
        self.idleTimeout = idleTimeout
        self.sendTimeout = sendTimeout
    }
}

extension Duration {
    /// Whole milliseconds, rounded up, for `poll(2)`; at least 0.
    var pollMilliseconds: Int32 {
        let (seconds, attoseconds) = components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: max(0, milliseconds))
    }
}
