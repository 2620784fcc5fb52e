import FoundationEssentials

/// The gallery's origin (`scheme://host[:port]`), the only place the agent ever sends requests.
///
/// Asset URLs are built as origin + `AssetKey`, never from a feed string, so a hostile feed cannot point the
/// agent elsewhere. Only `http` and `https` are accepted; a path, query, user info or fragment is a usage error.
public struct ServerAddress: Sendable, Equatable, CustomStringConvertible {
    /// The book's server listens here.
    static let `default` = try! ServerAddress("http://localhost:8080")

    public let origin: String

    public init(_ string: String) throws(SyncError) {
        guard let components = URLComponents(string: string), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else {
            throw SyncError(.configuration, "server must be an http:// or https:// URL with a host, got \"\(string)\"")
        }
        guard components.user == nil, components.password == nil, components.query == nil, components.fragment == nil,
            components.path.isEmpty || components.path == "/"
        else {
            throw SyncError(.configuration, "server must be an origin such as http://localhost:8080, without path, query or credentials; got \"\(string)\"")
        }
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        self.origin = "\(scheme)://\(hostPart)" + (components.port.map { ":\($0)" } ?? "")
    }

    /// `GET` this for the feed.
    var feedURL: String { origin + "/gallery/images" }

    /// The URL of one asset.
    public func url(for key: AssetKey) -> String { origin + key.rawValue }

    public var description: String { origin }
}
