/// A feed URL the agent has accepted as an asset on the configured server: a path plus optional query,
/// such as `/gallery/image?3`. This is the key of the memory cache, the disk index and every log line.
///
/// The only way to get one is `init(feedURL:)`, which refuses anything that could make the agent request
/// another host or name a file outside its directory: absolute or scheme-relative URLs, paths not starting
/// with `/`, `..` segments (also percent-encoded), backslashes, fragments, whitespace, control characters,
/// NUL, non-ASCII, and keys longer than `maximumLength`.
///
/// A class, not a struct: a feed lists every key three times and the memory cache, the index's answers and the
/// pass all hold it, so a copy is one reference, and the hash of its url is worked out once, when the key is
/// accepted (every access hashes the key into a dictionary or two; docs/BENCHMARKS.md has the profile).
public final class AssetKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Longer keys are refused: no gallery needs them, and they bound log lines and file names.
    static let maximumLength = 1024

    /// The path and query, always starting with a single `/`.
    public let rawValue: String

    /// The name of the key's file in the sync directory (`AssetFileName`), worked out once, when the key is
    /// accepted: every access logs it and looks the index up by it.
    let fileName: String

    /// `rawValue`'s hash in this process, for `hash(into:)` and a cheap first test in `==`.
    private let urlHash: Int

    /// Why a feed URL was refused.
    public struct Rejection: Error, Sendable, Equatable, CustomStringConvertible {
        public let url: String
        public let reason: String
        public var description: String { "feed url refused (\(reason))" }
    }

    /// Accepts `url` from the feed, or says why not. One pass over the bytes: a feed lists every key three
    /// times, and a large gallery has a hundred thousand of them.
    public init(feedURL url: String) throws(Rejection) {
        try Self.validate(url)
        self.rawValue = url
        self.fileName = AssetFileName.derive(from: url)
        self.urlHash = url.hashValue
    }

    /// A key read back from the agent's own index: checked like a feed url, with the file name its row records
    /// (derived when the file was written) instead of deriving it again for every row of a large index.
    public init(indexedURL url: String, fileName: String) throws(Rejection) {
        try Self.validate(url)
        self.rawValue = url
        self.fileName = fileName
        self.urlHash = url.hashValue
    }

    /// A key only to look `url` up by (`FeedState.member(_:)`): not checked, so never requested, logged or used
    /// as a file name itself; what a lookup finds is the feed's own, checked key. A walk of a large index probes
    /// the feed once per row, and checking every row's url first was a fair part of the walk.
    init(probing url: String) {
        self.rawValue = url
        self.fileName = ""
        self.urlHash = url.hashValue
    }

    private static func validate(_ url: String) throws(Rejection) {
        func reject(_ reason: String) -> Rejection { Rejection(url: url, reason: reason) }
        let bytes = url.utf8
        guard !bytes.isEmpty else { throw reject("empty") }
        guard bytes.count <= Self.maximumLength else { throw reject("longer than \(Self.maximumLength) bytes") }
        let slash = UInt8(ascii: "/"), dot = UInt8(ascii: "."), question = UInt8(ascii: "?")
        var window: (UInt8, UInt8, UInt8) = (0, 0, 0)  // the last three bytes, lower-cased
        var percentEncoded = false, dotSegment = false, doubleDot = false
        var inQuery = false
        var segment = (length: 0, dots: 0)
        for byte in bytes {
            if byte < 0x21 || byte > 0x7E { throw reject("whitespace, control or non-ASCII character") }
            if byte == UInt8(ascii: "\\") { throw reject("backslash") }
            if byte == UInt8(ascii: "#") { throw reject("fragment") }
            window = (window.1, window.2, byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte)
            if window.0 == UInt8(ascii: "%"),
                [(0x32, 0x65), (0x32, 0x66), (0x35, 0x63), (0x30, 0x30)].contains(where: { $0 == (window.1, window.2) })
            {
                percentEncoded = true  // %2e %2f %5c %00
            }
            if window.1 == dot && window.2 == dot { doubleDot = true }
            if !inQuery {
                if byte == slash || byte == question {
                    dotSegment = dotSegment || Self.isDotSegment(segment)
                    segment = (0, 0)
                    inQuery = byte == question
                } else {
                    segment.length += 1
                    if byte == dot { segment.dots += 1 }
                }
            }
        }
        if !inQuery { dotSegment = dotSegment || Self.isDotSegment(segment) }
        guard bytes.first == slash else {
            throw reject(url.contains("://") ? "absolute URL: only paths on the configured server are fetched" : "does not start with /")
        }
        guard !url.hasPrefix("//") else { throw reject("scheme-relative URL names another host") }
        if percentEncoded { throw reject("percent-encoded dot, slash, backslash or NUL") }
        if dotSegment { throw reject("dot segment in path") }
        if doubleDot { throw reject("contains ..") }
    }

    /// `.` or `..` as a whole path segment.
    private static func isDotSegment(_ segment: (length: Int, dots: Int)) -> Bool {
        (segment.length == 1 || segment.length == 2) && segment.dots == segment.length
    }

    public static func == (lhs: AssetKey, rhs: AssetKey) -> Bool {
        lhs === rhs || (lhs.urlHash == rhs.urlHash && lhs.rawValue == rhs.rawValue)
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(urlHash) }

    public var description: String { rawValue }

    public static func < (lhs: AssetKey, rhs: AssetKey) -> Bool { lhs.rawValue < rhs.rawValue }
}
