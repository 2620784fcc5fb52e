import CCurl

/// Which HTTP version the client asks servers for (`--http-version`), and with it how transfers share connections.
///
/// The three differ only where a server could speak HTTP/2; against an HTTP/1.1-only server each ends up with
/// HTTP/1.1 on up to `maxConcurrentRequests` kept-alive connections. The default is ``http1_1``: against nginx
/// over TLS on loopback, a cold run of 20,000 small images cost the agent about 10 % less CPU and wall time over
/// eight HTTP/1.1 connections than as eight HTTP/2 streams on one (docs/BENCHMARKS.md, "HTTP/2 or HTTP/1.1").
public enum HTTPVersion: String, Sendable, CaseIterable {
    /// libcurl's own default (`CURL_HTTP_VERSION_2TLS`): HTTP/2 when an `https` server offers it (ALPN), HTTP/1.1
    /// otherwise. Once an HTTP/2 connection is up, later transfers become streams on it; transfers started
    /// together before any connection is up each open one rather than wait (the agent fetches its feed first, so
    /// it ends up with one connection, as nginx counted).
    case auto
    /// HTTP/1.1 only (`CURL_HTTP_VERSION_1_1`): one request at a time per connection, up to
    /// `maxConcurrentRequests` connections, each kept alive. The default.
    case http1_1 = "1.1"
    /// HTTP/2 asked for, as `curl --http2` asks (`CURL_HTTP_VERSION_2_0`): through ALPN over TLS, with
    /// `Upgrade: h2c` over plain `http` (a server that ignores it answers in HTTP/1.1). Transfers wait for a
    /// connection that can multiplex (`CURLOPT_PIPEWAIT`): one connection, `maxConcurrentRequests` streams on it.
    case http2 = "2"

    /// The value of `CURLOPT_HTTP_VERSION`.
    var curlOptionValue: Int {
        switch self {
        case .auto: CURL_HTTP_VERSION_2TLS
        case .http1_1: CURL_HTTP_VERSION_1_1
        case .http2: CURL_HTTP_VERSION_2_0
        }
    }

    /// Whether a transfer waits for a connection it can multiplex on instead of opening one (`CURLOPT_PIPEWAIT`).
    var waitsToMultiplex: Bool { self == .http2 }
}
