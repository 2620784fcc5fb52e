import EmbeddedHTTP
import HTTPTypes
import Prometheus

/// The opt-in Prometheus endpoint: `GET /metrics` on `--metrics-listen HOST:PORT`, in the text exposition
/// format, rendered from the registry that the agent's `SyncMetrics` record into.
///
/// Owns the ``EmbeddedHTTP/HTTPServer`` that serves it (the same small server as the bundled gallery: one
/// thread accepting, one per connection). Nothing else is served; there is no authentication, which is why the
/// man page says to keep it on loopback.
public final class MetricsEndpoint: Sendable {
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
    /// `SyncError` when it cannot be bound (address in use, unknown host).
    public static func start(
        registry: PrometheusCollectorRegistry, address: MetricsListenAddress
    ) async throws(SyncError) -> MetricsEndpoint {
        let server = HTTPServer(host: address.host, port: address.port, maximumBodySize: 0) { request in
            guard request.path == "/metrics" else {
                return HTTPServerResponse(status: .notFound, headerFields: [.contentType: "text/plain; charset=utf-8"], body: .bytes(Array("not found; try /metrics\n".utf8)))
            }
            guard request.head.method == .get || request.head.method == .head else {
                return HTTPServerResponse(status: .methodNotAllowed, headerFields: [.allow: "GET, HEAD"])
            }
            var text: [UInt8] = []
            registry.emit(into: &text)
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

    /// Stops serving and waits until the socket is closed and its threads have ended. Idempotent.
    public func stop() async {
        await server.stop(gracePeriod: .seconds(2))
    }
}
