import Foundation

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

    /// Decodes a feed body. Urls among `known` (the keys of the last feed) are not checked again.
    public static func decode(_ body: [UInt8], known: [AssetKey] = []) throws(SyncError) -> GalleryFeed {
        let items: [FeedItem]
        do {
            items = try JSONDecoder().decode([FeedItem].self, from: Data(body))
        } catch {
            throw SyncError(.feed, "feed is not a JSON array of {name, url, price, checksum}: \(Self.describe(error))")
        }
        var entries: [AssetKey] = []
        var rejections: [AssetKey.Rejection] = []
        var tags: [AssetKey: String] = [:]
        // Each distinct url is checked (and its file name worked out) once: the feed lists every item three times.
        var accepted = Dictionary(known.map { ($0.rawValue, $0) }, uniquingKeysWith: { first, _ in first })
        entries.reserveCapacity(items.count)
        for item in items {
            let key: AssetKey
            if let known = accepted[item.url] {
                key = known
            } else {
                do {
                    key = try AssetKey(feedURL: item.url)
                } catch {
                    rejections.append(error)
                    continue
                }
                accepted[item.url] = key
            }
            entries.append(key)
            if tags[key] == nil { tags[key] = item.checksum }
        }
        let feed = GalleryFeed(entries: entries, rejections: rejections, tags: tags)
        guard feed.uniqueKeys.count <= maximumUniqueAssets else {
            throw SyncError(.feed, "feed lists more than \(maximumUniqueAssets) unique assets; refusing it")
        }
        return feed
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.keyNotFound(_, let context), DecodingError.dataCorrupted(let context):
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return path.isEmpty ? context.debugDescription : "at \(path): \(context.debugDescription)"
        default:
            return String(describing: error)
        }
    }
}
