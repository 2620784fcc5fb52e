import CurlHTTP
import EmbeddedHTTP
@testable import EmojiArtSync
import Foundation
import Prometheus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Hostile clients of `--metrics-listen` over real sockets. Before, each connection took a thread of its own
/// for as long as it liked: 300 clients that sent half a request line took the agent from 16 to 316 threads.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct MetricsPortLimitTests {
    /// A client that connects and sends `text`, then holds the connection until it is dropped.
    final class HalfSentRequest {
        private let client: RawClient

        init(port: Int, sending text: String) throws {
            client = try RawClient(port: port, receiveTimeout: 20)
            try client.send(text)
        }

        /// Waits for the server to end the connection (an end of stream or a reset); false after 20 s.
        func waitForClose() -> Bool { client.readToEnd().closed }
    }

    /// The endpoint's threads, by their name (other tests' threads, their galleries' included, share the process).
    static var serverThreads: Int { ProcessResources.current().threads(named: MetricsEndpoint.threadName) }

    static func registry() -> PrometheusCollectorRegistry {
        let registry = PrometheusCollectorRegistry()
        registry.makeCounter(descriptor: MetricNameDescriptor(metricName: "probe", unitName: "total", helpText: "What the scrape must return.")).increment()
        return registry
    }

    @Test func aScrapeIsAnsweredWhile300ClientsHoldHalfSentRequests() async throws {
        let endpoint = try await MetricsEndpoint.start(registry: Self.registry(), address: MetricsListenAddress(host: "127.0.0.1", port: 0))
        let client = try CurlHTTPClient()
        defer { client.shutdown() }
        for _ in 0..<3 { _ = try await client.get(endpoint.url) }  // the client's and the server's threads exist now
        var junk: [HalfSentRequest] = []
        for _ in 0..<300 { junk.append(try HalfSentRequest(port: endpoint.address.port, sending: "GET /metrics HT")) }
        let response = try await client.get(endpoint.url)
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self).contains("probe_total 1"))
        #expect(Self.serverThreads <= 1 + MetricsEndpoint.limits.handlerThreads, "the event loop and the handler threads")
        #expect(endpoint.openConnections <= MetricsEndpoint.limits.maximumConnections)
        #expect(junk[0].waitForClose(), "the oldest half-sent request made room for the newer ones")
        await endpoint.stop()
    }

    @Test func aClientThatDoesNotFinishItsRequestInTimeIsDisconnected() async throws {
        var limits = MetricsEndpoint.limits
        limits.requestTimeout = .milliseconds(200)
        let endpoint = try await MetricsEndpoint.start(
            registry: Self.registry(), address: MetricsListenAddress(host: "127.0.0.1", port: 0), limits: limits)
        let slow = try HalfSentRequest(port: endpoint.address.port, sending: "GET /metrics HT")
        #expect(slow.waitForClose())
        #expect(await eventually { endpoint.openConnections == 0 })
        await endpoint.stop()
    }
}
