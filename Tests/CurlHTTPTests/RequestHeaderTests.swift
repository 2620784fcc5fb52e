import CurlHTTP
import EmojiArtGallery
import TestSupport
import Testing

/// Extra request headers, `304 Not Modified`, and the per-request body limit.
@Suite("Request headers and conditional requests", .timeLimit(.minutes(1)))
struct RequestHeaderTests {
    @Test("extra headers reach the server; one named like libcurl's own replaces it; an empty value is sent empty")
    func headersArrive() async throws {
        let server = try TestHTTPServer { _ in .respond(status: 200, body: Array("ok".utf8)) }
        defer { server.stop() }
        let client = try CurlHTTPClient(configuration: .init(userAgent: "emojiart-sync-tests/1"))
        defer { client.shutdown() }

        let headers = HTTPHeaders([
            .init(name: "If-None-Match", value: #"W/"f-0123""#),
            .init(name: "If-Modified-Since", value: "Sun, 22 Nov 2026 23:42:49 GMT"),
            .init(name: "User-Agent", value: "replaced/2"),
            .init(name: "X-Empty", value: ""),
        ])
        let response = try await client.get(server.url("/feed"), headers: headers)
        #expect(response.status == 200)
        let request = try #require(server.requests.first)
        #expect(request.headers["if-none-match"] == #"W/"f-0123""#)
        #expect(request.headers["if-modified-since"] == "Sun, 22 Nov 2026 23:42:49 GMT")
        #expect(request.headers["user-agent"] == "replaced/2")
        #expect(request.headers["x-empty"] == "")

        // The next request on the same client carries none of them.
        _ = try await client.get(server.url("/plain"))
        let plain = try #require(server.requests.last)
        #expect(plain.headers["if-none-match"] == nil)
        #expect(plain.headers["user-agent"] == "emojiart-sync-tests/1")
    }

    @Test("a kept easy handle carries nothing of its last request: not its headers, its size limit, nor its error")
    func aKeptHandleStartsClean() async throws {
        let server = try TestHTTPServer { request in
            request.target == "/cut" ? .truncated(declaredLength: 5000, sentBytes: 100) : .respond(status: 200, body: Array(repeating: 7, count: 100))
        }
        defer { server.stop() }
        // One transfer at a time: every request after the first runs on the first one's handle.
        let client = try CurlHTTPClient(configuration: .init(maxConcurrentRequests: 1))
        defer { client.shutdown() }

        let limited = await #expect(throws: HTTPClientError.self) {
            try await client.get(
                server.url("/limited"), headers: HTTPHeaders([.init(name: "If-None-Match", value: #""v1""#)]), maxBodySize: 10)
        }
        #expect(limited?.kind == .tooLarge(limit: 10))
        let cut = await #expect(throws: HTTPClientError.self) { try await client.get(server.url("/cut")) }
        #expect(cut?.kind == .truncated)
        let plain = try await client.get(server.url("/plain"))
        #expect(plain.status == 200)
        #expect(plain.body.count == 100, "the last request's 10-byte limit stayed with it")
        let requests = server.requests
        #expect(requests.map(\.target) == ["/limited", "/cut", "/plain"])
        #expect(requests.first?.headers["if-none-match"] == #""v1""#)
        #expect(requests.dropFirst().allSatisfy { $0.headers["if-none-match"] == nil }, "a header outlived its request")
        // A failure's detail is its own, never the text libcurl wrote for the request before it.
        let again = await #expect(throws: HTTPClientError.self) { try await client.get(server.url("/cut")) }
        #expect(again?.kind == .truncated)
        #expect(again?.detail == cut?.detail)
        let limitedAgain = await #expect(throws: HTTPClientError.self) { try await client.get(server.url("/x"), maxBodySize: 10) }
        #expect(limitedAgain?.kind == .tooLarge(limit: 10))
        #expect(limitedAgain?.detail != cut?.detail, "\(String(describing: limitedAgain?.detail))")
        #expect(client.statistics.easyHandlesMade == 1)
        #expect(client.statistics.requestsStarted == 5)
    }

    @Test("a header that could split the request is refused before anything is sent", arguments: [
        HTTPHeaders.Field(name: "X-Bad", value: "a\r\nInjected: yes"),
        HTTPHeaders.Field(name: "X-Bad", value: "a\nb"),
        HTTPHeaders.Field(name: "Bad Name", value: "x"),
        HTTPHeaders.Field(name: "Bad:Name", value: "x"),
        HTTPHeaders.Field(name: "", value: "x"),
    ])
    func headerInjectionRefused(field: HTTPHeaders.Field) async throws {
        let server = try TestHTTPServer { _ in .respond(status: 200) }
        defer { server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        let error = await #expect(throws: HTTPClientError.self) {
            try await client.get(server.url("/x"), headers: HTTPHeaders([field]))
        }
        #expect(error?.kind == .invalidRequest)
        #expect(server.acceptedConnections == 0)
        #expect(client.statistics.requestsStarted == 0)
    }

    @Test("a 304 is a response with an empty body; fetch, which wants a body, throws saying so")
    func notModifiedIsAResponse() async throws {
        let server = try TestHTTPServer { request in
            request.headers["if-none-match"] == #""v1""#
                ? .respond(status: 304, headers: [("ETag", #""v1""#)])
                : .respond(status: 200, headers: [("ETag", #""v1""#)], body: Array("content".utf8))
        }
        defer { server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        let fresh = try await client.get(server.url("/a"))
        #expect(fresh.status == 200)
        let etag = try #require(fresh.headers["etag"])
        let cached = try await client.get(server.url("/a"), headers: HTTPHeaders([.init(name: "If-None-Match", value: etag)]))
        #expect(cached.status == 304)
        #expect(cached.body.isEmpty)
        #expect(cached.headers["etag"] == #""v1""#)
        // The connection survived the bodiless answer.
        #expect(server.acceptedConnections == 1)

        let unmodified = try TestHTTPServer { _ in .respond(status: 304) }
        defer { unmodified.stop() }
        let error = await #expect(throws: HTTPClientError.self) { try await client.fetch(unmodified.url("/a")) }
        #expect(error?.kind == .httpStatus(304))
        #expect(error?.message.contains("304 Not Modified") == true)
        let other = try TestHTTPServer { _ in .respond(status: 204) }
        defer { other.stop() }
        let noContent = await #expect(throws: HTTPClientError.self) { try await client.fetch(other.url("/a")) }
        #expect(noContent?.kind == .httpStatus(204))
    }

    @Test("a per-request body limit overrides the client's, in both directions")
    func perRequestBodyLimit() async throws {
        let body = [UInt8](repeating: 7, count: 4096)
        let server = try TestHTTPServer { _ in .respond(status: 200, body: body) }
        defer { server.stop() }
        let client = try CurlHTTPClient(configuration: .init(maxBodySize: 1024))
        defer { client.shutdown() }

        let small = await #expect(throws: HTTPClientError.self) { try await client.get(server.url("/a")) }
        #expect(small?.kind == .tooLarge(limit: 1024))
        #expect(try await client.get(server.url("/a"), maxBodySize: 8192).body == body)
        let smaller = await #expect(throws: HTTPClientError.self) { try await client.get(server.url("/a"), maxBodySize: 100) }
        #expect(smaller?.kind == .tooLarge(limit: 100))
    }

    @Test("against the gallery: If-None-Match with the image's ETag gets 304 and no body")
    func galleryNotModified() async throws {
        let gallery = GalleryServer(configuration: GalleryConfiguration(host: "127.0.0.1", port: 0, count: 29))
        let base = try await gallery.start()
        do {
            let client = try CurlHTTPClient()
            defer { client.shutdown() }
            let first = try await client.get(base + "/gallery/image?3")
            #expect(first.body == gallery.imageBytes(3))
            let etag = try #require(first.headers["etag"])
            let second = try await client.get(base + "/gallery/image?3", headers: HTTPHeaders([.init(name: "If-None-Match", value: etag)]))
            #expect(second.status == 304)
            #expect(second.body.isEmpty)
            #expect(client.statistics.connectionsOpened == 1)
        } catch {
            await gallery.stop()
            throw error
        }
        await gallery.stop()
    }
}
