import FoundationEssentials

extension GalleryFeed {
    /// The feed as Foundation's `JSONDecoder` reads it: the whole body into `[FeedItem]`, then sorted like
    /// `decode`. The agent does not use it: it is the reference `decode` is checked against (the fuzz-corpus
    /// tests, the fuzzer's differential check) and measured against (`contrib/bench/feed-decode.sh`).
    static func decodeWithJSONDecoder(_ body: [UInt8], known: [AssetKey] = []) throws(SyncError) -> GalleryFeed {
        let items: [FeedItem]
        do {
            items = try JSONDecoder().decode([FeedItem].self, from: Data(body))
        } catch {
            throw SyncError(.feed, "feed is not a JSON array of {name, url, price, checksum}: \(Self.describe(error))")
        }
        var entries: [AssetKey] = []
        var rejections: [AssetKey.Rejection] = []
        var tags: [AssetKey: String] = [:]
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
