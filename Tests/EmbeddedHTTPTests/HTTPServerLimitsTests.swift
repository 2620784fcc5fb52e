import CurlHTTP
import Dispatch
import EmbeddedHTTP
import HTTPTypes
import TestSupport
import Testing

/// The server's limits against hostile clients over real sockets: a few hundred half-sent requests (a
/// slowloris) hold neither threads nor the port, and clients that are too slow are disconnected.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct HTTPServerLimitsTests {
    /// What this suite's servers call their threads: counted apart from other suites' servers.
    static let threadName = "limits-http"

    static func server(_ limits: HTTPServerLimits) -> HTTPServer {
        HTTPServer(host: "127.0.0.1", port: 0, limits: limits, threadName: threadName) { _ in
            HTTPServerResponse(status: .ok, headerFields: [.contentType: "text/plain"], body: .bytes(Array("answered".utf8)))
        }
    }

    /// Before, each of the 300 took a thread of its own, and kept it for as long as it liked.
    @Test func threeHundredHalfSentRequestsAddNoThreadsAndARealRequestIsStillAnswered() async throws {
        let limits = HTTPServerLimits(maximumConnections: 16, handlerThreads: 2, requestTimeout: .seconds(60))
        let server = Self.server(limits)
        let port = try server.start()
        let client = try CurlHTTPClient()
        defer { client.shutdown() }
        // Warm up: the client's thread, the handler threads and the cooperative pool exist from here on.
        for _ in 0..<4 { _ = try await client.get("http://127.0.0.1:\(port)/warm-up") }
        var junk: [RawClient] = []
        for _ in 0..<300 {
            let raw = try RawClient(port: port)
            try raw.send("GET /metrics HT")
            junk.append(raw)
        }
        // The oldest were closed to make room for the newest: the first one reads the end of the stream.
        #expect(junk[0].readToEnd().closed, "the connection that waited longest was closed")
        let response = try await client.get("http://127.0.0.1:\(port)/metrics")
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "answered")
        // Counted by name: tests beside this one start threads of their own.
        #expect(
            ProcessResources.current().threads(named: Self.threadName) <= 1 + limits.handlerThreads,
            "the event loop and the handler threads")
        #expect(server.openConnections <= limits.maximumConnections)
        await server.stop(gracePeriod: .zero)
    }

    @Test(arguments: ["", "GET /metrics HT", "GET / HTTP/1.1\r\nHost: x\r\n"])
    func aRequestNotCompleteWithinTheRequestTimeoutIsDisconnected(sent: String) async throws {
        let server = Self.server(HTTPServerLimits(requestTimeout: .milliseconds(200)))
        let port = try server.start()
        let raw = try RawClient(port: port)
        if !sent.isEmpty { try raw.send(sent) }
        let (text, closed) = raw.readToEnd()  // the server's close ends the wait (or its 10 s receive timeout)
        #expect(closed, "the server closed the connection")
        #expect(text.isEmpty, "without an answer: \(text)")
        await server.stop()
    }

    @Test func anIdleKeepAliveConnectionIsClosedAfterTheIdleTimeout() async throws {
        let server = Self.server(HTTPServerLimits(requestTimeout: .seconds(30), idleTimeout: .milliseconds(200)))
        let port = try server.start()
        let raw = try RawClient(port: port)
        try raw.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        let first = raw.read(until: "answered")
        #expect(first.hasPrefix("HTTP/1.1 200 OK"), "\(first)")
        #expect(!first.contains("Connection: close"), "kept alive")
        let (rest, closed) = raw.readToEnd()
        #expect(closed && rest.isEmpty, "closed once idle: \(rest)")
        await server.stop()
    }

    /// A request that arrives while every connection is being answered is refused at once, not queued.
    @Test func aConnectionBeyondTheCapWhileAllAreBusyIsClosedAtOnce() async throws {
        let release = BlockingGate()
        let server = HTTPServer(host: "127.0.0.1", port: 0, limits: HTTPServerLimits(maximumConnections: 1, handlerThreads: 1)) { _ in
            release.waitBlocking()
            return HTTPServerResponse(status: .ok, body: .bytes(Array("answered".utf8)))
        }
        let port = try server.start()
        let busy = try RawClient(port: port)
        try busy.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        release.waitUntilWaiting()
        let refused = try RawClient(port: port)
        let (text, closed) = refused.readToEnd()
        #expect(closed && text.isEmpty, "\(text)")
        release.open()
        #expect(busy.read(until: "answered").hasPrefix("HTTP/1.1 200 OK"))
        await server.stop()
    }
}

/// A handler that blocks until the test opens it, and tells the test when it is blocked.
final class BlockingGate: Sendable {
    private let entered = DispatchSemaphore(value: 0)
    private let opened = DispatchSemaphore(value: 0)

    /// In the handler: says it is here, then waits for ``open()``.
    func waitBlocking() {
        entered.signal()
        opened.wait()
    }

    /// In the test: returns once a handler waits.
    func waitUntilWaiting() { entered.wait() }

    /// Lets one handler go on.
    func open() { opened.signal() }
}
