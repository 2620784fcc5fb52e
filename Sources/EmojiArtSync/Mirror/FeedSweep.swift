/// What the index holds of the feed, from one walk (`FeedCatalogue.current()`), each list sorted.
struct FeedSweep: Sendable {
    /// Feed keys with no file in the index.
    var unstored: [AssetKey] = []
    /// Feed keys whose file was stored under another tag than the feed's now: refreshed.
    var stale: [AssetKey] = []
    /// Keys of rows that are no key of the feed: their files are removed (behind `--max-delete`).
    var gone: [AssetKey] = []
}

/// Keys to add to and remove from one of a `FeedSweep`'s sorted lists: the last change said of a key counts. Applied
/// in one pass over the list, and not at all when nothing changed (a list of 10,000 unstored keys, the error items of
/// a 100,000-key gallery, was hashed into a set and sorted again at each of a pass's four questions).
struct SortedKeyEdits {
    private var added: Set<AssetKey> = []
    private var removed: Set<AssetKey> = []

    mutating func add(_ key: AssetKey) {
        added.insert(key)
        removed.remove(key)
    }

    mutating func remove(_ key: AssetKey) {
        removed.insert(key)
        added.remove(key)
    }

    /// `sorted` (ascending, no repeats) with the edits made, still sorted.
    func applied(to sorted: [AssetKey]) -> [AssetKey] {
        if added.isEmpty && removed.isEmpty { return sorted }
        let kept = removed.isEmpty ? sorted : sorted.filter { !removed.contains($0) }
        let new = added.filter { key in
            let at = kept.partitioningIndex { $0 >= key }
            return at == kept.count || kept[at] != key
        }.sortedByURL()
        guard !new.isEmpty else { return kept }
        var merged: [AssetKey] = []
        merged.reserveCapacity(kept.count + new.count)
        var next = new.startIndex
        for key in kept {
            while next < new.endIndex && new[next] < key {
                merged.append(new[next])
                next += 1
            }
            merged.append(key)
        }
        merged.append(contentsOf: new[next...])
        return merged
    }
}

extension Sequence<AssetKey> {
    /// The keys in `<` order (their urls' bytes), sorted by an 8-byte copy of each url taken after the prefix all of
    /// them share (big-endian in a `UInt64`, beside the key's index), the keys themselves compared only where those
    /// bytes are equal. Sorting the keys themselves reads two heap blocks per comparison, and a cold pass sorts its
    /// 100,000 unstored keys before its first request (docs/BENCHMARKS.md). No url holds a NUL, so a url that ends
    /// within the 8 bytes (padded with zeros) sorts before every longer one.
    func sortedByURL() -> [AssetKey] {
        let keys = Array(self)
        guard keys.count > 64 else { return keys.sorted() }
        let first = keys[0]
        var shared = first.withURL { $0.count }
        for key in keys.dropFirst() where shared > 0 {
            shared = first.withURL { first in
                key.withURL { url in
                    var length = 0
                    let limit = Swift.min(shared, url.count)
                    while length < limit && first[length] == url[length] { length += 1 }
                    return length
                }
            }
        }
        var order: [(prefix: UInt64, index: Int32)] = []
        order.reserveCapacity(keys.count)
        for (index, key) in keys.enumerated() {
            let prefix = key.withURL { url in
                var value: UInt64 = 0
                for offset in 0..<8 {
                    value = value << 8 | UInt64(shared + offset < url.count ? url[shared + offset] : 0)
                }
                return value
            }
            order.append((prefix, Int32(index)))
        }
        order.sort { left, right in
            left.prefix != right.prefix ? left.prefix < right.prefix : keys[Int(left.index)] < keys[Int(right.index)]
        }
        return order.map { keys[Int($0.index)] }
    }
}

extension [AssetKey] {
    /// The first index whose key satisfies `isAbove`, which holds from some index on in this sorted array.
    fileprivate func partitioningIndex(where isAbove: (AssetKey) -> Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if isAbove(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
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
        result.unstored = zip(feed.keys, storedAt).compactMap { key, stored in stored ? nil : key }.sortedByURL()
        result.gone = result.gone.sortedByURL()
        result.stale = result.stale.sortedByURL()
    }
}
