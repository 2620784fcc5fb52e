/// A feed URL the agent has accepted as an asset on the configured server: a path plus optional query,
/// such as `/gallery/image?3`. This is the key of the memory cache, the disk index and every log line.
///
/// The only way to get one is `init(feedURL:)`, which refuses anything that could make the agent request
/// another host or name a file outside its directory: absolute or scheme-relative URLs, paths not starting
/// with `/`, `..` segments (also percent-encoded), backslashes, fragments, whitespace, control characters,
/// NUL, non-ASCII, and keys longer than `maximumLength`.
public struct AssetKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Longer keys are refused: no gallery needs them, and they bound log lines and file names.
    public static let maximumLength = 1024

    /// The path and query, always starting with a single `/`.
    public let rawValue: String

    /// Why a feed URL was refused.
    public struct Rejection: Error, Sendable, Equatable, CustomStringConvertible {
        public let url: String
        public let reason: String
        public var description: String { "feed url refused (\(reason))" }
    }

    /// Accepts `url` from the feed, or says why not.
    public init(feedURL url: String) throws(Rejection) {
        func reject(_ reason: String) -> Rejection { Rejection(url: url, reason: reason) }
        guard !url.isEmpty else { throw reject("empty") }
        guard url.utf8.count <= Self.maximumLength else { throw reject("longer than \(Self.maximumLength) bytes") }
        for byte in url.utf8 {
            if byte < 0x21 || byte > 0x7E { throw reject("whitespace, control or non-ASCII character") }
            if byte == UInt8(ascii: "\\") { throw reject("backslash") }
            if byte == UInt8(ascii: "#") { throw reject("fragment") }
        }
        guard url.hasPrefix("/") else {
            throw reject(url.contains("://") ? "absolute URL: only paths on the configured server are fetched" : "does not start with /")
        }
        guard !url.hasPrefix("//") else { throw reject("scheme-relative URL names another host") }
        let lowered = url.lowercased()
        if lowered.contains("%2e") || lowered.contains("%2f") || lowered.contains("%5c") || lowered.contains("%00") {
            throw reject("percent-encoded dot, slash, backslash or NUL")
        }
        let path = url.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        if path.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == ".." || $0 == "." }) {
            throw reject("dot segment in path")
        }
        if url.contains("..") { throw reject("contains ..") }
        self.rawValue = url
    }

    public var description: String { rawValue }

    public static func < (lhs: AssetKey, rhs: AssetKey) -> Bool { lhs.rawValue < rhs.rawValue }
}
