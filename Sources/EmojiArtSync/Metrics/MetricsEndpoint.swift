import EmbeddedHTTP
import HTTPTypes
import Prometheus

/// The opt-in Prometheus endpoint: `GET /metrics` on `--metrics-listen HOST:PORT`, in the text exposition
/// format, rendered from the registry that the agent's `SyncMetrics` record into.
///
/// Owns the ``EmbeddedHTTP/HTTPServer`` that serves it (the same small server as the bundled gallery), with
/// ``limits``: hostile clients of the port cost at most 16 descriptors and 3 threads. Nothing else is served;
/// there is no authentication, which is why the man page says to keep it on loopback.
public final class MetricsEndpoint: Sendable {
    /// At most 16 connections at once (a Prometheus server or two, and `curl`; beyond that the connection that
    /// waited longest for a request is closed), 2 threads answering (a scrape takes a millisecond), a request
    /// within 5 s of connecting or of its first byte, keep-alive for 60 s (a 1-minute scrape interval), and
    /// 10 s for a client that does not read its answer.
    /// What the endpoint's threads are called (`top -H`): not the bundled gallery's `embedded-http`.
    static let threadName = "metrics-http"

    public static let limits = HTTPServerLimits(
        maximumConnections: 16, handlerThreads: 2, requestTimeout: .seconds(5), idleTimeout: .seconds(60),
        sendTimeout: .seconds(10))

    /// Where it listens, with the bound port (useful when the port asked for was 0).
    public let address: MetricsListenAddress
    private let server: HTTPServer

    private init(address: MetricsListenAddress, server: HTTPServer) {
        self.address = address
        self.server = server
    }

    /// `http://HOST:PORT/metrics`.
    public var url: String { "http://\(address)/metrics" }

    /// Binds `address` and serves `registry`; returns once the socket is bound. Throws a `.configuration`
    /// `SyncError` when it cannot be bound (address in use, unknown host). `limits` are for tests.
    public static func start(
        registry: PrometheusCollectorRegistry, address: MetricsListenAddress, limits: HTTPServerLimits = limits
    ) async throws(SyncError) -> MetricsEndpoint {
        let server = HTTPServer(
            host: address.host, port: address.port, maximumBodySize: 0, limits: limits, threadName: Self.threadName
        ) { request in
            guard request.path == "/metrics" else {
                return HTTPServerResponse(status: .notFound, headerFields: [.contentType: "text/plain; charset=utf-8"], body: .bytes(Array("not found; try /metrics\n".utf8)))
            }
            guard request.head.method == .get || request.head.method == .head else {
                return HTTPServerResponse(status: .methodNotAllowed, headerFields: [.allow: "GET, HEAD"])
            }
            var text: [UInt8] = []
            registry.emit(into: &text)
            text += ProcessMetrics.exposition().utf8
            return HTTPServerResponse(
                status: .ok, headerFields: [.contentType: "text/plain; version=0.0.4; charset=utf-8"], body: .bytes(text))
        }
        let port: Int
        do {
            port = try server.start()
        } catch {
            throw SyncError(.configuration, "--metrics-listen \(address): cannot listen: \(error.message)")
        }
        return MetricsEndpoint(address: MetricsListenAddress(host: address.host, port: port), server: server)
    }

    /// Connections open now (for tests and the reliability figures).
    var openConnections: Int { server.openConnections }

    /// Stops serving and waits until the socket is closed and its threads have ended. Idempotent.
    public func stop() async {
        await server.stop(gracePeriod: .seconds(2))
    }
}
