/// The gallery feed, decoded and sorted into what the agent will fetch and what it refused.
///
/// Decoding is a pure function of the bytes, so it runs off every actor. The feed is untrusted: a body
/// that is not a JSON array of items is an error with a readable message; a single bad `url` refuses that
/// item only; an absurd number of items is refused as a whole rather than allocating without bound.
public struct GalleryFeed: Sendable {
    /// More unique assets than this and the feed is refused: no gallery has that many, a hostile one might.
    public static let maximumUniqueAssets = 100_000

    /// Every accepted item in feed order, duplicates included: the feed repeats items on purpose.
    public let entries: [AssetKey]
    /// The distinct keys, in order of first appearance.
    public let uniqueKeys: [AssetKey]
    /// Items whose url was refused, with the reason.
    public let rejections: [AssetKey.Rejection]

    /// Each key's `checksum` (its first one, when duplicates disagree): an opaque tag the server may change
    /// when the key's content changes (the book's server makes new ones at every start). A stored file whose
    /// tag differs from the feed's is fetched again, conditionally.
    public let tags: [AssetKey: String]

    public init(entries: [AssetKey], rejections: [AssetKey.Rejection] = [], tags: [AssetKey: String] = [:]) {
        self.entries = entries
        var seen = Set<AssetKey>()
        self.uniqueKeys = entries.filter { seen.insert($0).inserted }
        self.rejections = rejections
        self.tags = tags
    }

    /// The feed as `FeedReader` builds it: `uniqueKeys` already worked out while reading.
    init(entries: [AssetKey], uniqueKeys: [AssetKey], rejections: [AssetKey.Rejection], tags: [AssetKey: String]) {
        self.entries = entries
        self.uniqueKeys = uniqueKeys
        self.rejections = rejections
        self.tags = tags
    }

    /// Decodes a feed body in one streaming pass (`FeedReader`): only `url` and `checksum` are kept, and a
    /// url already met costs no allocation. Urls among `known` (the keys of the last feed) are not checked
    /// again, and the keys made for them are reused.
    public static func decode(_ body: [UInt8], known: [AssetKey] = []) throws(SyncError) -> GalleryFeed {
        try FeedReader.read(body, known: known, maximumUniqueAssets: maximumUniqueAssets)
    }
}
