import CurlHTTP
import TestSupport
import Testing

/// `HTTPClientConfiguration.httpVersion` reaches libcurl: over plain `http`, only `.http2` asks the server to
/// switch to HTTP/2 (`Upgrade: h2c`, as `curl --http2` does), and a server that ignores it (this one speaks
/// HTTP/1.1 only) still answers every request of every setting, on kept-alive connections.
@Suite("HTTP version", .timeLimit(.minutes(1)))
struct HTTPVersionTests {
    @Test("only --http-version 2 offers an upgrade to HTTP/2; each setting gets its answer", arguments: HTTPVersion.allCases)
    func upgradeOfferedOnlyForHTTP2(version: HTTPVersion) async throws {
        let server = try TestHTTPServer { _ in .respond(status: 200, body: Array("ok".utf8)) }
        defer { server.stop() }
        let client = try CurlHTTPClient(configuration: .init(httpVersion: version))
        defer { client.shutdown() }

        #expect(try await client.fetch(server.url("/feed")) == Array("ok".utf8))
        let request = try #require(server.requests.first)
        if version == .http2 {
            #expect(request.headers["upgrade"] == "h2c", "\(request.headers)")
            #expect(request.headers["http2-settings"] != nil, "\(request.headers)")
        } else {
            #expect(request.headers["upgrade"] == nil, "\(request.headers)")
            #expect(request.headers["http2-settings"] == nil, "\(request.headers)")
        }
    }

    /// `.http2` makes each transfer wait for a connection it could multiplex on; an HTTP/1.1 server's first
    /// answer says it cannot, and the waiting transfers must then go on, on connections of their own.
    @Test("with HTTP/2 asked of an HTTP/1.1 server, 40 requests at 4 at a time all succeed on at most 4 connections")
    func http2AgainstAnHTTP1ServerStillRunsEveryRequest() async throws {
        let server = try TestHTTPServer { request in
            .respond(status: 200, body: Array(request.target.utf8), delayMilliseconds: 5)
        }
        defer { server.stop() }
        let client = try CurlHTTPClient(configuration: .init(maxConcurrentRequests: 4, httpVersion: .http2))
        defer { client.shutdown() }

        let bodies = try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
            for index in 0..<40 {
                group.addTask { (index, try await client.fetch(server.url("/item/\(index)"))) }
            }
            var bodies: [Int: [UInt8]] = [:]
            for try await (index, body) in group { bodies[index] = body }
            return bodies
        }
        #expect(bodies.count == 40)
        for (index, body) in bodies { #expect(body == Array("/item/\(index)".utf8)) }
        #expect(client.statistics.requestsSucceeded == 40)
        #expect(server.acceptedConnections <= 4)
    }
}
