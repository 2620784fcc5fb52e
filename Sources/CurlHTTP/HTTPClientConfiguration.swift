/// How a ``CurlHTTPClient`` talks to servers: concurrency, timeouts, size limit, identity, trust, redirects, proxies,
/// the HTTP version.
///
/// A plain value: the client copies it at `init` and never reads it again, so changing a
/// configuration after creating a client has no effect on that client.
///
/// Values out of range are clamped when the client is created rather than rejected: a
/// concurrency or redirect limit below its minimum becomes that minimum (1, 0), a timeout below one millisecond (or one second for
/// ``lowSpeedTime``, which libcurl counts in whole seconds) becomes that minimum, and a
/// negative body limit becomes 0. The command line validates user input; the client only
/// makes sure libcurl never sees a value that would mean "unlimited" by accident (libcurl
/// reads 0 as "no timeout").
public struct HTTPClientConfiguration: Sendable {
    /// How many transfers run at once; later requests wait in FIFO order.
    ///
    /// This is also the cap on open connections (`CURLMOPT_MAX_TOTAL_CONNECTIONS`,
    /// `CURLMOPT_MAX_HOST_CONNECTIONS`, `CURLMOPT_MAXCONNECTS`), so keep-alive reuses at most
    /// this many connections; over HTTP/2 the transfers are streams, most often on one connection
    /// (``httpVersion``). 8 keeps a small gallery server busy without flooding it; the
    /// book's client has no limit at all.
    public var maxConcurrentRequests: Int

    /// How long establishing a connection (TCP plus TLS) may take (`CURLOPT_CONNECTTIMEOUT_MS`).
    ///
    /// 10 s is long enough for a slow network and short enough that a dead host is reported
    /// while a person is still watching the log.
    public var connectTimeout: Duration

    /// Together with ``lowSpeedTime``: a transfer slower than this many bytes per second for
    /// that long is aborted as timed out (`CURLOPT_LOW_SPEED_LIMIT`).
    ///
    /// 1 byte/s means "the server stopped sending": it catches a stalled connection without
    /// punishing a merely slow one.
    public var lowSpeedLimitBytesPerSecond: Int

    /// See ``lowSpeedLimitBytesPerSecond`` (`CURLOPT_LOW_SPEED_TIME`, whole seconds, rounded up).
    public var lowSpeedTime: Duration

    /// The longest one request may take from start to last byte (`CURLOPT_TIMEOUT_MS`).
    ///
    /// Like every timeout here it counts from when the transfer starts, not while the request
    /// waits in the queue for one of the ``maxConcurrentRequests`` slots.
    ///
    /// 300 s is a backstop for a server that trickles just above the low-speed limit forever;
    /// a 32 MiB body at a modest 1 Mbit/s still fits.
    public var totalTimeout: Duration

    /// The largest body accepted, in bytes; larger responses fail with
    /// ``HTTPClientError/Kind/tooLarge(limit:)``. One request may set its own limit instead
    /// (`maxBodySize:` of ``CurlHTTPClient/get(_:headers:maxBodySize:)``).
    ///
    /// Enforced twice: up front from a declared `Content-Length` (`CURLOPT_MAXFILESIZE_LARGE`)
    /// and while streaming, so an endless body costs at most this much memory. 32 MiB is far
    /// above any gallery image (a 360x650 PNG is well under 1 MiB) and far below what would
    /// hurt the machine.
    public var maxBodySize: Int

    /// The most bytes per second all transfers together may receive (`--bwlimit`); nil for no limit. Shared by
    /// every transfer of the client, as one budget (``ReceiveBudget``), not per transfer. The timeouts still
    /// count: a transfer held back gets its turn every fraction of a second, but a body larger than
    /// ``totalTimeout`` times its share of the rate cannot arrive.
    public var maxReceiveBytesPerSecond: Int?

    /// The HTTP version asked for, and so how transfers share connections (``HTTPVersion``).
    public var httpVersion: HTTPVersion

    /// The `User-Agent` header sent with every request, so server logs can tell the agent apart.
    public var userAgent: String

    /// A PEM file of certificate authorities to trust for `https` (`CURLOPT_CAINFO`), such as a private CA's
    /// certificate; nil uses the system's store. As with curl's `--cacert`, the file replaces libcurl's
    /// default bundle, so a server must chain to a certificate in it. Verification is never turned off.
    public var caCertificateFile: String?

    /// How many redirects one request follows (`301`, `302`, `303`, `307`, `308` with a `Location`), each
    /// only to the same host (any port; `http` may become `https`, never the reverse). A redirect to another
    /// host, a downgrade, or one more than this is not followed: the `3xx` is returned, saying why
    /// (``HTTPResponse/refusedRedirect``). 0 follows none. 5 is more than a server moving to `https` and
    /// to a new path needs, and few enough that a loop ends at once.
    public var maxRedirects: Int

    /// The proxy variables requests are routed by (``ProxyEnvironment``); by default the process's
    /// environment when the configuration is made.
    public var proxyEnvironment: ProxyEnvironment

    /// Creates a configuration; every parameter has the documented default.
    public init(
        maxConcurrentRequests: Int = 8,
        connectTimeout: Duration = .seconds(10),
        lowSpeedLimitBytesPerSecond: Int = 1,
        lowSpeedTime: Duration = .seconds(30),
        totalTimeout: Duration = .seconds(300),
        maxBodySize: Int = 32 * 1024 * 1024,
        userAgent: String = "emojiart-sync",
        caCertificateFile: String? = nil,
        maxRedirects: Int = 5,
        proxyEnvironment: ProxyEnvironment = .current,
        maxReceiveBytesPerSecond: Int? = nil,
        httpVersion: HTTPVersion = .http1_1
    ) {
        self.httpVersion = httpVersion
        self.maxReceiveBytesPerSecond = maxReceiveBytesPerSecond
        self.maxConcurrentRequests = maxConcurrentRequests
        self.connectTimeout = connectTimeout
        self.lowSpeedLimitBytesPerSecond = lowSpeedLimitBytesPerSecond
        self.lowSpeedTime = lowSpeedTime
        self.totalTimeout = totalTimeout
        self.maxBodySize = maxBodySize
        self.userAgent = userAgent
        self.caCertificateFile = caCertificateFile
        self.maxRedirects = maxRedirects
        self.proxyEnvironment = proxyEnvironment
    }
}

extension HTTPClientConfiguration {
    /// The configuration with every value clamped into the range libcurl should see.
    var clamped: HTTPClientConfiguration {
        var copy = self
        copy.maxConcurrentRequests = max(1, maxConcurrentRequests)
        copy.lowSpeedLimitBytesPerSecond = max(0, lowSpeedLimitBytesPerSecond)
        copy.maxBodySize = max(0, maxBodySize)
        copy.maxRedirects = max(0, maxRedirects)
        copy.maxReceiveBytesPerSecond = maxReceiveBytesPerSecond.map { max(1, $0) }
        copy.connectTimeout = max(.milliseconds(1), connectTimeout)
        copy.totalTimeout = max(.milliseconds(1), totalTimeout)
        copy.lowSpeedTime = max(.seconds(1), lowSpeedTime)
        return copy
    }
}

extension Duration {
    /// Whole milliseconds, rounded up, saturating at `Int.max`: the unit of libcurl's `*_MS` options.
    var wholeMillisecondsRoundedUp: Int {
        let (seconds, attoseconds) = components
        let (millis, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? 0 : Int(Int64.max) }
        let fraction = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int(clamping: millis + fraction)
    }

    /// Whole seconds, rounded up: the unit of `CURLOPT_LOW_SPEED_TIME`.
    var wholeSecondsRoundedUp: Int {
        let (seconds, attoseconds) = components
        return Int(clamping: attoseconds > 0 ? seconds + 1 : seconds)
    }

    /// A short human form for log messages: `300ms`, `1.5s`, `10s`.
    var humanReadable: String {
        let millis = wholeMillisecondsRoundedUp
        if millis < 1000 { return "\(millis)ms" }
        if millis % 1000 == 0 { return "\(millis / 1000)s" }
        if millis < 10_000 {
            let tenths = (millis + 50) / 100
            return "\(tenths / 10).\(tenths % 10)s"
        }
        return "\((millis + 500) / 1000)s"
    }
}
