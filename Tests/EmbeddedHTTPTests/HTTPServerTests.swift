import CurlHTTP
import EmbeddedHTTP
import Foundation
import HTTPTypes
import Synchronization
import TestSupport
import Testing

/// The small HTTP/1.1 server over real sockets on 127.0.0.1: framing, keep-alive, refusals, streamed bodies,
/// and a stop that leaves no descriptor or thread behind.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct HTTPServerTests {
    /// Answers `/echo` with the request's method, target and body length; `/stream` with three chunks.
    static func server() -> HTTPServer {
        HTTPServer(host: "127.0.0.1", port: 0, maximumHeadSize: 4096, maximumBodySize: 1000) { request in
            switch request.path {
            case "/stream":
                return HTTPServerResponse(status: .ok, body: .stream(contentLength: nil) { writer in
                    for part in ["one,", "two,", "three"] { try writer.write(Array(part.utf8)) }
                })
            default:
                let text = "\(request.head.method.rawValue) \(request.target) \(request.body.count)"
                return HTTPServerResponse(status: .ok, headerFields: [.contentType: "text/plain"], body: .bytes(Array(text.utf8)))
            }
        }
    }

    @Test func twoPipelinedRequestsAreAnsweredInOrderOnOneConnection() async throws {
        let server = Self.server()
        let port = try server.start()
        let client = try RawClient(port: port)
        try client.send("GET /echo?a HTTP/1.1\r\nHost: x\r\n\r\nPOST /echo?b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
        let text = client.read(until: "POST /echo?b 5")
        #expect(text.contains("GET /echo?a 0"), "\(text)")
        #expect(text.contains("POST /echo?b 5"), "\(text)")
        let first = try #require(text.range(of: "GET /echo?a 0"))
        let second = try #require(text.range(of: "POST /echo?b 5"))
        #expect(first.lowerBound < second.lowerBound, "answers come in the order of the requests")
        #expect(!text.contains("Connection: close"))
        await server.stop()
    }

    @Test func connectionCloseAndHTTP10EndTheConnectionAfterTheAnswer() async throws {
        let server = Self.server()
        let port = try server.start()
        for request in ["GET /echo HTTP/1.1\r\nConnection: close\r\n\r\n", "GET /echo HTTP/1.0\r\n\r\n"] {
            let client = try RawClient(port: port)
            try client.send(request)
            let (text, closed) = client.readToEnd()
            #expect(closed && text.hasPrefix("HTTP/1.1 200 OK\r\n") && text.contains("Connection: close\r\n"), "\(text)")
        }
        await server.stop()
    }

    @Test(arguments: [
        ("GARBAGE\r\n\r\n", "400"),
        ("GET /echo HTTP/2.0\r\n\r\n", "505"),
        ("GET /echo HTTP/1.1\r\nNo colon here\r\n\r\n", "400"),
        ("GET /echo HTTP/1.1\r\nX-Big: \(String(repeating: "a", count: 5000))\r\n\r\n", "431"),
        ("POST /echo HTTP/1.1\r\nContent-Length: 1001\r\n\r\n", "413"),
        ("POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "501"),
        // The start of a TLS ClientHello (a client using https:// on this plain-HTTP port): no blank line will
        // ever come, so it is answered at once rather than after the client's timeout.
        ("\u{16}\u{03}\u{01}\u{00}\u{05}\u{01}", "400"),
    ])
    func aRequestTheServerWillNotServeGetsItsStatusAndTheConnectionCloses(request: String, status: String) async throws {
        let server = Self.server()
        let port = try server.start()
        let client = try RawClient(port: port)
        try client.send(request)
        let (text, closed) = client.readToEnd()
        #expect(text.hasPrefix("HTTP/1.1 \(status) "), "\(text.prefix(200))")
        #expect(closed)
        await server.stop()
    }

    /// The event loop reads a request and the end of the stream in one go; the request is answered all the same.
    @Test func aRequestFollowedByTheClientsHalfCloseIsStillAnswered() async throws {
        let server = Self.server()
        let port = try server.start()
        let client = try RawClient(port: port)
        try client.send("GET /echo?half HTTP/1.1\r\nHost: x\r\n\r\n")
        client.finishSending()
        let (text, closed) = client.readToEnd()
        #expect(text.hasPrefix("HTTP/1.1 200 OK") && text.contains("GET /echo?half 0"), "\(text)")
        #expect(closed)
        await server.stop()
    }

    @Test func aStreamOfUnknownLengthGoesOutChunkedAndArrivesWhole() async throws {
        let server = Self.server()
        let port = try server.start()
        let client = try CurlHTTPClient()
        defer { client.shutdown() }
        let response = try await client.get("http://127.0.0.1:\(port)/stream")
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "one,two,three")
        await server.stop()
    }

    /// Starts a server whose one endpoint streams until the server stops, opens an idle connection and a busy
    /// one (a client that never reads, so the body blocks in `send`), and stops it.
    static func stopWithABodyInProgress() async throws -> (idle: RawClient, busy: RawClient) {
        let started = Mutex(false)
        let server = HTTPServer(host: "127.0.0.1", port: 0) { _ in
            HTTPServerResponse(status: .ok, body: .stream(contentLength: nil) { writer in
                started.withLock { $0 = true }
                while !writer.serverIsStopping { try writer.write([UInt8](repeating: 0x61, count: 65536)) }
            })
        }
        let port = try server.start()
        let idle = try RawClient(port: port)
        let busy = try RawClient(port: port)
        try busy.send("GET /forever HTTP/1.1\r\n\r\n")
        _ = await eventually(timeout: .seconds(10)) { started.withLock { $0 } }
        try #require(started.withLock { $0 }, "the streamed body never started")
        #expect(ProcessResources.serverThreads == 2, "the event loop and one handler thread")
        await server.stop(gracePeriod: .milliseconds(250))
        return (idle, busy)
    }

    /// Counts every descriptor of the process, so it runs in a child process of its own (an exit test), where no
    /// other test opens any; the child says what it found on stderr and exits 1 when something was left.
    @Test func stopEndsABodyInProgressAndLeavesNoDescriptorOrThreadBehind() async throws {
        let result = try #require(
            await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                // A first round warms up whatever the process makes once (a timer's descriptor, for one).
                _ = try await HTTPServerTests.stopWithABodyInProgress()
                let descriptors = ProcessResources.current().descriptorCount
                let (idle, busy) = try await HTTPServerTests.stopWithABodyInProgress()
                let idleClosed = idle.readToEnd().closed
                _ = busy.readToEnd()
                // A connection thread is detached and counted; stop() returns at its last instruction, so the
                // kernel may still be tearing it down for a moment.
                _ = await eventually(timeout: .seconds(2)) { ProcessResources.serverThreads == 0 }
                let threads = ProcessResources.serverThreads
                let after = ProcessResources.current().descriptorCount
                let report = "idle closed \(idleClosed), server threads \(threads), descriptors \(descriptors) -> \(after)\n"
                FileHandle.standardError.write(Data(report.utf8))
                // Only the two client sockets are left.
                if !idleClosed || threads != 0 || after != descriptors + 2 { exit(1) }
            })
        #expect(result.exitStatus == .exitCode(0), "\(String(decoding: result.standardErrorContent, as: UTF8.self))")
    }

    @Test func aPortInUseIsRefusedSayingSo() async throws {
        let first = Self.server()
        let port = try first.start()
        let second = HTTPServer(host: "127.0.0.1", port: port) { _ in HTTPServerResponse(status: .ok) }
        let error = #expect(throws: HTTPServerError.self) { try second.start() }
        #expect(error?.kind == .cannotListen)
        #expect(error?.message.contains("Address already in use") == true, "\(String(describing: error))")
        await first.stop()
    }
}
