/// Where the Prometheus endpoint listens: `--metrics-listen HOST:PORT` (`[::1]:9464` for IPv6).
///
/// Owns the parsing of that option only; the endpoint (`MetricsEndpoint`) binds it.
public struct MetricsListenAddress: Sendable, Equatable, CustomStringConvertible {
    public let host: String
    /// 0 lets the kernel pick a free port (the endpoint logs the one it got).
    let port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`; nil when the host is empty or the port is not 0...65535.
    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port)
        else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        self.init(host: host, port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
