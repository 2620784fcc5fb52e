import CurlHTTP
import TestSupport
import Testing

/// `HTTPClientConfiguration.httpVersion` reaches libcurl: over plain `http`, only `.http2` asks the server to
/// switch to HTTP/2 (`Upgrade: h2c`, as `curl --http2` does); a server that takes the offer answers in HTTP/2,
/// and one that ignores it still answers every request of every setting in HTTP/1.1.
@Suite("HTTP version", .timeLimit(.minutes(1)))
struct HTTPVersionTests {
    /// The server switches whoever offers: the body exists only in an HTTP/2 `DATA` frame, so `.http2` reads it,
    /// and the others, which do not offer, get the HTTP/1.1 answer.
    @Test("a server that takes the h2c offer answers .http2 in HTTP/2; the others are not offered", arguments: HTTPVersion.allCases)
    func aServerTakingTheOfferAnswersInHTTP2(version: HTTPVersion) async throws {
        let server = try TestHTTPServer { request in
            request.headers["upgrade"] == "h2c"
                ? .switchToHTTP2(body: Array("over HTTP/2".utf8)) : .respond(status: 200, body: Array("over HTTP/1.1".utf8))
        }
        defer { server.stop() }
        let client = try CurlHTTPClient(configuration: .init(httpVersion: version))
        defer { client.shutdown() }

        let response = try await client.get(server.url("/feed"))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == (version == .http2 ? "over HTTP/2" : "over HTTP/1.1"))
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

        let bodies = try await client.fetchAll((0..<40).map { index in server.url("/item/\(index)") })
        #expect(bodies.count == 40)
        for (index, body) in bodies { #expect(body == Array("/item/\(index)".utf8)) }
        #expect(client.statistics.requestsSucceeded == 40)
        #expect(server.acceptedConnections <= 4)
    }
}
