import CurlHTTP
import TestSupport
import Testing

/// What a successful transfer hands back: exact bytes, status and headers, whatever the status.
@Suite("Responses", .timeLimit(.minutes(1)))
struct ResponseTests {
    @Test("GET returns the exact body, status and headers")
    func exactBytes() async throws {
        // Every byte value, several times over, and more than one write callback's worth.
        let body = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
        let server = try TestHTTPServer { request in
            .respond(
                status: 200,
                headers: [("X-Gallery", "emojiart"), ("Set-Cookie", "a=1"), ("set-cookie", "b=2")],
                body: request.target == "/blob" ? body : [])
        }
        defer { server.stop() }
        let client = try CurlHTTPClient(configuration: .init(userAgent: "emojiart-sync-tests/1"))
        defer { client.shutdown() }

        let response = try await client.get(server.url("/blob"))

        #expect(response.status == 200)
        #expect(response.url == server.url("/blob"))
        #expect(response.body == body)
        #expect(response.headers["x-gallery"] == "emojiart")
        #expect(response.headers["X-GALLERY"] == "emojiart")
        #expect(response.headers.values(for: "Set-Cookie") == ["a=1", "b=2"])
        #expect(response.headers["content-length"] == "\(body.count)")
        #expect(response.headers["x-missing"] == nil)
        let request = try #require(server.requests.first)
        #expect(request.method == "GET")
        #expect(request.headers["user-agent"] == "emojiart-sync-tests/1")
        #expect(client.statistics.bytesReceived == body.count)
        #expect(client.statistics.requestsSucceeded == 1)
    }

    @Test("Header values lose the blanks around them; names match ignoring ASCII letter case only")
    func headerValuesAndNames() async throws {
        let server = try TestHTTPServer { _ in
            .respond(status: 200, headers: [("X-Padded", " \t padded value\t "), ("X-Empty", "\t"), ("X-Tick`", "1")], body: [])
        }
        defer { server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        let response = try await client.get(server.url("/"))
        #expect(response.headers["x-padded"] == "padded value")
        #expect(response.headers["x-empty"] == "")
        #expect(response.headers["X-TICK`"] == "1")
        // `@` and the backtick differ by the bit that makes a letter lower case: they are not the same name.
        #expect(response.headers["x-tick@"] == nil)
    }

    @Test("A 200 with an error document is returned as 200: the client does not judge bodies")
    func errorDocumentWith200() async throws {
        let json = Array(#"{"error": "File not found."}"#.utf8)
        let server = try TestHTTPServer { _ in .respond(status: 200, headers: [("Content-Type", "application/json")], body: json) }
        defer { server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        let response = try await client.get(server.url("/gallery/image?10"))
        #expect(response.status == 200)
        #expect(response.body == json)
        #expect(try await client.fetch(server.url("/gallery/image?20")) == json)
    }

    @Test("500: get returns the status and body, fetch throws httpStatus(500)")
    func serverError() async throws {
        let server = try TestHTTPServer { _ in .respond(status: 500, body: Array("boom".utf8)) }
        defer { server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }
        let url = server.url("/gallery/image?3")

        let response = try await client.get(url)
        #expect(response.status == 500)
        #expect(response.body == Array("boom".utf8))

        let error = await #expect(throws: HTTPClientError.self) { try await client.fetch(url) }
        #expect(error?.kind == .httpStatus(500))
        #expect(error?.message == "HTTP 500 from \(url)")
        #expect(error?.url == url)
    }

    @Test("With maxRedirects 0, a 302 is returned as is, and its Location is not followed")
    func redirectNotFollowed() async throws {
        let server = try TestHTTPServer { request in
            request.target == "/old"
                ? .respond(status: 302, headers: [("Location", "/new")])
                : .respond(status: 200, body: Array("new".utf8))
        }
        defer { server.stop() }
        let client = try CurlHTTPClient(configuration: .init(maxRedirects: 0))
        defer { client.shutdown() }

        let response = try await client.get(server.url("/old"))
        #expect(response.status == 302)
        #expect(response.headers["location"] == "/new")
        #expect(response.body.isEmpty)
        #expect(server.requestCount("/new") == 0)

        let error = await #expect(throws: HTTPClientError.self) { try await client.fetch(server.url("/old")) }
        #expect(error?.kind == .httpStatus(302))
        #expect(error?.message == "HTTP 302 from \(server.url("/old")) (redirect to \(server.url("/new")) not followed)")
        #expect(server.requestCount("/new") == 0)
    }

    @Test("Sequential requests reuse one kept-alive connection")
    func keepAlive() async throws {
        let server = try TestHTTPServer { request in .respond(status: 200, body: Array(request.target.utf8)) }
        defer { server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        for index in 0..<20 {
            let response = try await client.get(server.url("/item/\(index)"))
            #expect(response.body == Array("/item/\(index)".utf8))
        }
        #expect(server.acceptedConnections == 1)
        #expect(client.statistics.connectionsOpened == 1)
        #expect(client.statistics.requestsStarted == 20)
        #expect(client.statistics.requestsSucceeded == 20)
    }
}
