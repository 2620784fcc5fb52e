#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The proxy variables of the environment, and which proxy (if any) a URL goes through, by libcurl's
/// own rules (`detect_proxy` in libcurl's `lib/url.c` and `check_noproxy` in `lib/noproxy.c`, 7.88):
///
/// - `http_proxy` for `http://` URLs (lower case only: `HTTP_PROXY` can be set by a CGI request's `Proxy:`
///   header, so libcurl ignores it); `https_proxy`, then `HTTPS_PROXY`, for `https://`; then `all_proxy`,
///   then `ALL_PROXY`. An empty value counts as unset.
/// - `no_proxy`, then `NO_PROXY`: `*` bypasses every proxy; otherwise a comma- or space-separated list of
///   host names (matching the host or any subdomain of it; a leading dot is ignored) and IP addresses,
///   optionally with a CIDR prefix length (`10.0.0.0/8`, `::1/128`).
///
/// The client makes this decision itself and hands libcurl the answer (`CURLOPT_PROXY`, the empty string
/// for "no proxy"), instead of letting libcurl read the environment, so that an error can say whether the
/// proxy or the server failed, and which variable named the proxy.
public struct ProxyEnvironment: Sendable, Equatable {
    /// The variables that matter, by name (`https_proxy`, `no_proxy`, ...); others are ignored.
    public var variables: [String: String]

    /// The names libcurl reads, in the order it reads them.
    static let names = ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"]

    /// A proxy environment of these variables (tests; a program normally uses ``current``).
    public init(_ variables: [String: String] = [:]) {
        self.variables = variables.filter { Self.names.contains($0.key) }
    }

    /// The process's environment, read now (`getenv`).
    public static var current: ProxyEnvironment {
        var variables: [String: String] = [:]
        for name in names {
            if let value = getenv(name) { variables[name] = String(cString: value) }
        }
        return ProxyEnvironment(variables)
    }

    /// The proxy a request to `scheme://host` goes through, or nil for a direct connection.
    public func proxy(scheme: String, host: String) -> HTTPProxy? {
        if bypasses(host: host) { return nil }
        let lower = scheme.lowercased() + "_proxy"
        var candidates = [lower]
        if lower != "http_proxy" { candidates.append(lower.uppercased()) }
        candidates += ["all_proxy", "ALL_PROXY"]
        for name in candidates {
            if let value = variables[name], !value.isEmpty {
                return HTTPProxy(url: value, variable: name)
            }
        }
        return nil
    }

    /// Whether `no_proxy` (or `NO_PROXY`) names `host`.
    func bypasses(host: String) -> Bool {
        guard let list = [variables["no_proxy"], variables["NO_PROXY"]].compactMap({ $0 }).first(where: { !$0.isEmpty })
        else { return false }
        if list.trimmingSpacesAndTabs() == "*" { return true }
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.hasSuffix(".") { name.removeLast() }
        let address = IPAddressBytes(name)
        for rawToken in list.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            var token = rawToken.lowercased()
            if let address {
                if Self.matches(address: address, token: token) { return true }
                continue
            }
            if token.hasPrefix(".") { token.removeFirst() }
            if token.hasSuffix(".") { token.removeLast() }
            if token.isEmpty { continue }
            if name == token || name.hasSuffix("." + token) { return true }
        }
        return false
    }

    /// An IP host against a `no_proxy` entry: the same address, or inside `address/bits`.
    private static func matches(address: IPAddressBytes, token: String) -> Bool {
        let parts = token.split(separator: "/", maxSplits: 1).map(String.init)
        var text = parts.first ?? ""
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        guard let network = IPAddressBytes(text), network.bytes.count == address.bytes.count else { return false }
        let totalBits = network.bytes.count * 8
        let bits = parts.count == 2 ? (Int(parts[1]) ?? -1) : totalBits
        guard (0...totalBits).contains(bits) else { return false }
        for bit in 0..<bits {
            let mask = UInt8(0x80) >> UInt8(bit % 8)
            if network.bytes[bit / 8] & mask != address.bytes[bit / 8] & mask { return false }
        }
        return true
    }
}

/// A proxy the client sends a request through, and the environment variable that named it.
public struct HTTPProxy: Sendable, Equatable {
    /// The variable's value as given (`http://127.0.0.1:3128`, `socks5h://proxy:1080`, `proxy:3128`).
    public var url: String
    /// The variable that named it (`https_proxy`), for messages.
    public var variable: String

    /// A proxy at `url`, named by `variable`.
    public init(url: String, variable: String) {
        self.url = url
        self.variable = variable
    }

    /// `host:port` of the proxy, for messages; the scheme's default port when none is written (libcurl's
    /// defaults: 1080 for SOCKS, 443 for an HTTPS proxy, 1080 for an HTTP proxy without a port, as libcurl
    /// assumes for `CURLOPT_PROXY`).
    public var authority: String {
        var rest = Substring(url)
        var scheme = "http"
        if let range = rest.firstRange(of: "://") {
            scheme = rest[..<range.lowerBound].lowercased()
            rest = rest[range.upperBound...]
        }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        let hasPort: Bool
        if rest.hasPrefix("[") {
            hasPort = rest.contains("]:")
        } else {
            hasPort = rest.contains(":")
        }
        if hasPort { return String(rest) }
        return "\(rest):\(scheme == "https" ? 443 : 1080)"
    }
}

/// The bytes of an IPv4 (4) or IPv6 (16) address in text form (`inet_pton`), or nil for a host name.
private struct IPAddressBytes {
    let bytes: [UInt8]

    init?(_ text: String) {
        var four = in_addr()
        if inet_pton(AF_INET, text, &four) == 1 {
            bytes = withUnsafeBytes(of: &four) { Array($0) }
            return
        }
        var six = in6_addr()
        if inet_pton(AF_INET6, text, &six) == 1 {
            bytes = withUnsafeBytes(of: &six) { Array($0) }
            return
        }
        return nil
    }
}
