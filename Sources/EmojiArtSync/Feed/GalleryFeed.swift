/// The gallery feed, decoded and sorted into what the agent will fetch and what it refused.
///
/// Decoding is a pure function of the bytes, so it runs off every actor. The feed is untrusted: a body
/// that is not a JSON array of items is an error with a readable message; a single bad `url` refuses that
/// item only; an absurd number of items is refused as a whole rather than allocating without bound.
struct GalleryFeed: Sendable {
    /// More unique assets than this and the feed is refused: no gallery has that many, a hostile one might.
    static let maximumUniqueAssets = 100_000

    /// Every accepted item in feed order, duplicates included (the feed repeats items on purpose), as its key's
    /// position in `items`: four bytes a listing, and what a pass indexes its tables with.
    let entryPositions: [Int32]
    /// The distinct keys, their positions and tags.
    let items: FeedState
    /// Items whose url was refused, with the reason.
    let rejections: [AssetKey.Rejection]

    init(entries: [AssetKey], rejections: [AssetKey.Rejection] = [], tags: [AssetKey: String] = [:]) {
        let items = FeedState(keys: entries, tags: tags)
        self.items = items
        self.entryPositions = entries.map { Int32(items.position(of: $0)!) }
        self.rejections = rejections
    }

    /// The feed as `FeedReader` builds it.
    init(entryPositions: [Int32], items: FeedState, rejections: [AssetKey.Rejection]) {
        self.entryPositions = entryPositions
        self.items = items
        self.rejections = rejections
    }

    /// Every accepted item in feed order, duplicates included.
    var entries: [AssetKey] { entryPositions.map { items.keys[Int($0)] } }
    /// How many items were accepted, duplicates included.
    var entryCount: Int { entryPositions.count }
    /// The distinct keys, in order of first appearance.
    var uniqueKeys: [AssetKey] { items.keys }

    /// Each key's `checksum` (its first one, when duplicates disagree): an opaque tag the server may change
    /// when the key's content changes (the book's server makes new ones at every start). A stored file whose
    /// tag differs from the feed's is fetched again, conditionally.
    var tags: [AssetKey: String] {
        var tags: [AssetKey: String] = [:]
        for (key, tag) in zip(items.keys, items.tags) { tags[key] = tag?.description }
        return tags
    }

    /// Decodes a feed body in one streaming pass (`FeedReader`): only `url` and `checksum` are kept, and a
    /// url already met costs no allocation. Urls among `known` (the keys of the last feed) are not checked
    /// again, and the keys made for them are reused.
    static func decode(_ body: [UInt8], known: [AssetKey] = []) throws(SyncError) -> GalleryFeed {
        try FeedReader.read(body, known: known, maximumUniqueAssets: maximumUniqueAssets)
    }

    /// `decode(_:known:)` of a body that went to a file (a large feed): read from its mapping, whose pages are
    /// given back as they are read (`MappedFeedBody`).
    static func decode(_ body: MappedFeedBody, known: [AssetKey] = []) throws(SyncError) -> GalleryFeed {
        guard case .feed(let feed, _, _) = try decode(body, known: known, previous: nil) else {
            preconditionFailure("a body with no last one to compare with was found to be the last one")
        }
        return feed
    }

    /// A body decoded from a file: the feed, where its items start, and how it was read.
    enum Decoded {
        /// Read whole, or (`asDifference`) only where it differs from the last body.
        case feed(GalleryFeed, layout: FeedLayout, asDifference: Bool)
        /// Byte for byte the last body (`previous`'s): not decoded.
        case sameBytes
    }

    /// `decode(_:known:)` of a body that went to a file, and where its items start: as its difference from
    /// `previous` when that pays (`FeedDifference`), else read whole.
    static func decode(
        _ body: MappedFeedBody, known: [AssetKey], previous: FeedDifference.Previous?
    ) throws(SyncError) -> Decoded {
        if let previous {
            do {
                switch try FeedDifference.decode(
                    body, previous: previous.feed, kept: previous.body, maximumUniqueAssets: maximumUniqueAssets)
                {
                case .sameBytes: return .sameBytes
                case .decoded(let feed, let layout): return .feed(feed, layout: layout, asDifference: true)
                case nil: break
                }
            } catch {
                // The kept body cannot be read: this one is read whole, which is all the kept one was for.
            }
        }
        let read = try body.withBytes { bytes throws(SyncError) in
            try FeedReader.readWithLayout(bytes, known: known, maximumUniqueAssets: maximumUniqueAssets) {
                body.release(upTo: $0)
            }
        }
        return .feed(read.feed, layout: read.layout, asDifference: false)
    }
}
