/// What the index holds of the feed, from one walk (`FeedCatalogue.current()`), each list sorted.
struct FeedSweep: Sendable {
    /// Feed keys with no file in the index.
    var unstored: [AssetKey] = []
    /// Feed keys whose file was stored under another tag than the feed's now: refreshed.
    var stale: [AssetKey] = []
    /// Keys of rows that are no key of the feed: their files are removed (behind `--max-delete`).
    var gone: [AssetKey] = []
}

/// One walk of the index matched with a feed: every row is stored-in-feed (with the feed's tag, or stale), or gone;
/// every feed key without a row is unstored. A value, so that the matching runs wherever the rows are: in the silo
/// during its own walk (`AssetIndex.forEachRow`), or on the blocking-I/O pool over rows read there
/// (`IndexRowSnapshot`). `FeedCatalogue` takes the result.
struct FeedSweepMatch: Sendable {
    private let feed: FeedState
    private(set) var result = FeedSweep()
    /// Whether each feed key (by position) has a row.
    private(set) var storedAt: [Bool]
    private(set) var storedCount = 0
    /// The digest of the fingerprint each stored feed key's row records (`FingerprintDigest.none`: none).
    private(set) var digests: [UInt64]
    /// Rows stored without a tag (adopted, or imported from an old manifest) of keys the feed tags: they take the
    /// feed's tag as it is.
    private(set) var untagged: [(name: String, tag: String)] = []

    init(feed: FeedState) {
        self.feed = feed
        storedAt = [Bool](repeating: false, count: feed.count)
        digests = [UInt64](repeating: FingerprintDigest.none, count: feed.count)
    }

    /// Matches one row of the index with the feed.
    mutating func add(_ row: IndexSweepRow) {
        guard let member = feed.member(url: row.url, fileName: row.name) else {
            let url = String(decoding: row.url, as: UTF8.self), name = String(decoding: row.name, as: UTF8.self)
            if let key = try? AssetKey(indexedURL: url, fileName: name) { result.gone.append(key) }
            return
        }
        let position = member.position
        if !storedAt[position] { storedCount += 1 }
        storedAt[position] = true
        digests[position] = row.digest
        guard let tag = feed.tags[position] else { return }
        guard let recordedTag = row.tag else {
            untagged.append((String(decoding: row.name, as: UTF8.self), tag.description))
            return
        }
        if FeedTag(recordedTag) != tag { result.stale.append(member.key) }
    }

    /// A row of the feed key at `position` whose digest and tag are known without reading it (`FeedCatalogue`
    /// carried it over from the feed before): stored, with the feed's tag or none.
    mutating func addStored(at position: Int, digest: UInt64) {
        if !storedAt[position] { storedCount += 1 }
        storedAt[position] = true
        digests[position] = digest
    }

    /// A row known to be no feed key's file (carried over from the sweep of the feed before).
    mutating func addGone(_ key: AssetKey) {
        result.gone.append(key)
    }

    /// Takes in what `other` matched of other rows with the same feed: the two halves of a walk matched at once.
    mutating func merge(_ other: FeedSweepMatch) {
        precondition(other.storedAt.count == storedAt.count, "matches of two feeds")
        for position in other.storedAt.indices where other.storedAt[position] {
            if !storedAt[position] { storedCount += 1 }
            storedAt[position] = true
            digests[position] = other.digests[position]
        }
        result.gone += other.result.gone
        result.stale += other.result.stale
        untagged += other.untagged
    }

    /// After the last row: the feed keys without one are the unstored; each list sorted.
    mutating func finish() {
        result.unstored = zip(feed.keys, storedAt).compactMap { key, stored in stored ? nil : key }.sorted()
        result.gone.sort()
        result.stale.sort()
    }
}
