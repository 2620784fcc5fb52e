import CurlHTTP
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Proxies from the environment, by libcurl's rules, and failures that name the proxy, not the server.
@Suite("Proxies", .serialized, .timeLimit(.minutes(1)))
struct ProxyTests {
    @Test("Which variable names the proxy for each scheme, as libcurl reads them")
    func selection() {
        let environment = ProxyEnvironment([
            "HTTP_PROXY": "http://ignored:1", "https_proxy": "http://secure:3128", "all_proxy": "socks5h://any:1080",
        ])
        // Upper-case HTTP_PROXY is never read (a CGI request's Proxy: header sets it); all_proxy is.
        #expect(environment.proxy(scheme: "http", host: "gallery") == HTTPProxy(url: "socks5h://any:1080", variable: "all_proxy"))
        #expect(environment.proxy(scheme: "https", host: "gallery") == HTTPProxy(url: "http://secure:3128", variable: "https_proxy"))
        #expect(ProxyEnvironment(["HTTPS_PROXY": "p:8"]).proxy(scheme: "https", host: "g")?.variable == "HTTPS_PROXY")
        #expect(ProxyEnvironment(["https_proxy": ""]).proxy(scheme: "https", host: "g") == nil, "empty is unset")
        #expect(ProxyEnvironment().proxy(scheme: "https", host: "g") == nil)
    }

    @Test(
        "no_proxy: names match the host and its subdomains, addresses match exactly or by CIDR, * matches all",
        arguments: [
            ("example.com", "example.com", true), ("example.com", "img.example.com", true),
            (".example.com", "img.example.com", true), ("example.com", "badexample.com", false),
            ("a.test, example.com", "EXAMPLE.com", true), ("10.0.0.0/8", "10.1.2.3", true),
            ("10.0.0.0/8", "11.1.2.3", false), ("127.0.0.1", "127.0.0.1", true), ("127.0.0.1", "127.0.0.2", false),
            ("::1", "[::1]", true), ("fd00::/8", "[fd12::1]", true), ("*", "anything", true), ("", "x", false),
        ])
    func noProxy(list: String, host: String, bypassed: Bool) {
        let environment = ProxyEnvironment(["http_proxy": "http://proxy:3128", "no_proxy": list])
        #expect((environment.proxy(scheme: "http", host: host) == nil) == bypassed)
    }

    @Test("The proxy's address and default port, for messages")
    func authority() {
        #expect(HTTPProxy(url: "http://user:pw@proxy.lan:3128/", variable: "x").authority == "proxy.lan:3128")
        #expect(HTTPProxy(url: "proxy.lan", variable: "x").authority == "proxy.lan:1080")
        #expect(HTTPProxy(url: "https://proxy.lan", variable: "x").authority == "proxy.lan:443")
        #expect(HTTPProxy(url: "http://[::1]:8080", variable: "x").authority == "[::1]:8080")
    }

    @Test("Requests go through the proxy the environment names (absolute-form request line), and around it per no_proxy")
    func throughTheProxy() async throws {
        let proxy = try TestHTTPServer { request in .respond(status: 200, body: Array(request.target.utf8)) }
        defer { proxy.stop() }
        let origin = try TestHTTPServer { _ in .respond(status: 200, body: Array("direct".utf8)) }
        defer { origin.stop() }
        let environment = ProxyEnvironment(["http_proxy": "http://127.0.0.1:\(proxy.port)"])
        let client = try CurlHTTPClient(configuration: .init(proxyEnvironment: environment))
        defer { client.shutdown() }

        // gallery.invalid never resolves (RFC 6761): only the proxy can answer for it.
        #expect(try await client.fetch("http://gallery.invalid:8080/gallery/images") == Array("http://gallery.invalid:8080/gallery/images".utf8))

        var bypassing = environment
        bypassing.variables["no_proxy"] = "127.0.0.1"
        let direct = try CurlHTTPClient(configuration: .init(proxyEnvironment: bypassing))
        defer { direct.shutdown() }
        #expect(try await direct.fetch(origin.url("/x")) == Array("direct".utf8))
        #expect(proxy.requests.count == 1)
    }

    @Test("A proxy that refuses the connection is named as the proxy, with the variable that named it")
    func refusingProxy() async throws {
        let port = try TestSockets.closedPort()
        let environment = ProxyEnvironment(["https_proxy": "http://127.0.0.1:\(port)"])
        let client = try CurlHTTPClient(configuration: .init(proxyEnvironment: environment))
        defer { client.shutdown() }

        let error = await #expect(throws: HTTPClientError.self) {
            try await client.get("https://gallery.invalid:8080/gallery/images")
        }
        #expect(error?.kind == .refused)
        #expect(error?.message == "connection refused by proxy 127.0.0.1:\(port) (from https_proxy) for https://gallery.invalid:8080/gallery/images (is the proxy running? no_proxy=gallery.invalid bypasses it)")
    }

    @Test("A proxy that will not open a tunnel says so, with its answer")
    func tunnelRefused() async throws {
        let proxy = try TestHTTPServer { _ in .respond(status: 403) }
        defer { proxy.stop() }
        let environment = ProxyEnvironment(["https_proxy": "127.0.0.1:\(proxy.port)"])
        let client = try CurlHTTPClient(configuration: .init(proxyEnvironment: environment))
        defer { client.shutdown() }

        let error = await #expect(throws: HTTPClientError.self) {
            try await client.get("https://gallery.invalid/gallery/images")
        }
        #expect(error?.message.hasPrefix("proxy 127.0.0.1:\(proxy.port) (from https_proxy) refused to open a tunnel to gallery.invalid:443") == true, "\(String(describing: error))")
        #expect(error?.message.contains("HTTP 403") == true)
        #expect(proxy.requests.first?.method == "CONNECT")
    }
}
