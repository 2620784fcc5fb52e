import Hummingbird
import Logging
import Prometheus
import ServiceLifecycle

/// The opt-in Prometheus endpoint: `GET /metrics` on `--metrics-listen HOST:PORT`, in the text exposition
/// format, rendered from the registry that the agent's `SyncMetrics` record into.
///
/// Owns the Hummingbird application and the task that runs it (in a `ServiceGroup` of its own that handles no
/// signals: the agent answers those). Nothing else is served; there is no authentication, which is why the
/// man page says to keep it on loopback.
public final class MetricsEndpoint: Sendable {
    /// Where it listens, with the bound port (useful when the port asked for was 0).
    public let address: MetricsListenAddress
    private let group: ServiceGroup
    private let task: Task<Void, Never>

    private init(address: MetricsListenAddress, group: ServiceGroup, task: Task<Void, Never>) {
        self.address = address
        self.group = group
        self.task = task
    }

    /// `http://HOST:PORT/metrics`.
    public var url: String { "http://\(address)/metrics" }

    /// Binds `address` and serves `registry`; returns once the socket is bound. Throws a `.configuration`
    /// `SyncError` when it cannot be bound (address in use, unknown host).
    public static func start(
        registry: PrometheusCollectorRegistry, address: MetricsListenAddress
    ) async throws(SyncError) -> MetricsEndpoint {
        let router = Router()
        router.get("metrics") { _, _ -> Response in
            var text: [UInt8] = []
            registry.emit(into: &text)
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: text)))
        }
        let quiet = Logger(label: "emojiart-sync.metrics") { _ in SwiftLogNoOpLogHandler() }
        let (bound, boundContinuation) = AsyncStream.makeStream(of: Int?.self)
        let application = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname(address.host, port: address.port), serverName: nil),
            onServerRunning: { channel in boundContinuation.yield(channel.localAddress?.port) },
            logger: quiet)
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [application], logger: quiet))
        let failure = AsyncStream.makeStream(of: String.self)
        let task = Task {
            do {
                try await group.run()
            } catch {
                failure.continuation.yield(String(describing: error))
            }
            boundContinuation.yield(nil)
            boundContinuation.finish()
            failure.continuation.finish()
        }
        var port: Int?
        for await event in bound {
            port = event
            break
        }
        guard let port else {
            var reason = "the server stopped"
            for await message in failure.stream {
                reason = message
                break
            }
            throw SyncError(.configuration, "--metrics-listen \(address): cannot listen: \(reason)")
        }
        return MetricsEndpoint(address: MetricsListenAddress(host: address.host, port: port), group: group, task: task)
    }

    /// Stops serving and waits until the socket is closed. Idempotent.
    public func stop() async {
        await group.triggerGracefulShutdown()
        await task.value
    }
}
