@testable import CurlHTTP
import TestSupport
import Testing

/// Redirects: followed on the same host up to the limit, never to another host, each refusal named.
/// `127.0.0.1` and `localhost` reach the same test server under two host names, so "another host" is a
/// real second host name without a second machine.
@Suite("Redirects", .serialized, .timeLimit(.minutes(1)))
struct RedirectTests {
    @Test("A same-host 301 and 302 are followed; the response says where it came from")
    func sameHostFollowed() async throws {
        let server = try TestHTTPServer { request in
            switch request.target {
            case "/old": .respond(status: 301, headers: [("Location", "/moved")])
            case "/moved": .respond(status: 302, headers: [("Location", "new?x=1")])
            default: .respond(status: 200, body: Array(request.target.utf8))
            }
        }
        defer { server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        let response = try await client.get(server.url("/old"))
        #expect(response.status == 200)
        #expect(response.body == Array("/new?x=1".utf8))
        #expect(response.url == server.url("/new?x=1"))
        #expect(try await client.fetch(server.url("/old")) == Array("/new?x=1".utf8))
    }

    @Test("Five redirects are followed, a sixth is not, and the error says so")
    func limit() async throws {
        let server = try TestHTTPServer { request in
            let hop = Int(request.target.dropFirst(2)) ?? 0
            return request.target.hasPrefix("/r") && hop < 6
                ? .respond(status: 307, headers: [("Location", "/r\(hop + 1)")])
                : .respond(status: 200, body: Array("end".utf8))
        }
        defer { server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        let followed = try await client.get(server.url("/r1"))
        #expect(followed.status == 200, "r1 -> r6 is five redirects")
        let refused = try await client.get(server.url("/r0"))
        #expect(refused.status == 307)
        #expect(refused.refusedRedirect == "more than 5 redirects")
        let error = await #expect(throws: HTTPClientError.self) { try await client.fetch(server.url("/r0")) }
        #expect(error?.message == "HTTP 307 from \(server.url("/r5")) (redirect to \(server.url("/r6")) not followed: more than 5 redirects)")
    }

    @Test("A redirect to another host is not followed, and the message names the target")
    func otherHostRefused() async throws {
        let server = try TestHTTPServer { request in
            request.target == "/old"
                ? .respond(status: 302, headers: [("Location", "http://localhost:\(request.headers["host"]?.split(separator: ":").last ?? "")/new")])
                : .respond(status: 200, body: Array("new".utf8))
        }
        defer { server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        let response = try await client.get(server.url("/old"))
        #expect(response.status == 302)
        #expect(response.refusedRedirect == "it leads to another host (localhost)")
        let error = await #expect(throws: HTTPClientError.self) { try await client.fetch(server.url("/old")) }
        #expect(error?.kind == .httpStatus(302))
        #expect(error?.message == "HTTP 302 from \(server.url("/old")) (redirect to http://localhost:\(server.port)/new not followed: it leads to another host (localhost))")
        #expect(server.requestCount("/new") == 0)
    }

    @Test("A redirect to a scheme other than http or https is not followed")
    func otherSchemeRefused() async throws {
        let server = try TestHTTPServer { _ in .respond(status: 301, headers: [("Location", "ftp://127.0.0.1/x")]) }
        defer { server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        let response = try await client.get(server.url("/old"))
        #expect(response.status == 301)
        #expect(response.refusedRedirect == "only http and https are followed")
        #expect(server.requests.count == 1)
    }
}

/// The rule itself, for the cases a plain-HTTP test server cannot produce (a redirect away from https).
@Suite("Redirect rule")
struct RedirectRuleTests {
    @Test(arguments: [
        ("http://h:1/a", "https://h:2/b", nil),
        ("http://H/a", "http://h:8080/b", nil),
        ("https://h/a", "https://h/b", nil),
        ("https://h/a", "http://h/b", "it would leave https for plain http"),
        ("http://h/a", "http://h.example/b", "it leads to another host (h.example)"),
        ("http://127.0.0.1/a", "http://127.0.0.2/a", "it leads to another host (127.0.0.2)"),
    ] as [(String, String, String?)])
    func refusal(from: String, to: String, expected: String?) throws {
        #expect(RedirectRule.refusal(from: try CurlURL(from), to: try CurlURL(to)) == expected)
    }
}
