import DequeModule

/// A least-recently-used map of assets bounded by what they cost in memory (`Asset.memoryCost`).
///
/// A plain value type (the `ImageLoader` actor owns the one that matters). Inserting past the limit evicts
/// the least recently used assets first; an asset larger than the whole limit is not kept at all.
///
/// Every operation is O(1) amortised, whatever the number of entries (a pass over a 100,000-item feed makes
/// hundreds of thousands of them): entries live in a dictionary with the stamp of their last use, and the
/// recency order is a queue of (key, stamp) in which a use appends a new stamp instead of moving the old one.
/// Eviction pops from the front and skips stamps that are no longer current; the queue is compacted when
/// stale stamps outnumber live ones.
public struct MemoryCache: Sendable {
    public let byteLimit: Int
    public private(set) var totalBytes = 0
    private var entries: [AssetKey: (asset: Asset, stamp: UInt64)] = [:]
    /// Oldest use first; a key may appear several times, only its latest stamp is live.
    private var recency: Deque<(key: AssetKey, stamp: UInt64)> = []
    private var clock: UInt64 = 0

    public init(byteLimit: Int) {
        self.byteLimit = max(0, byteLimit)
    }

    public var count: Int { entries.count }

    /// Returns the asset and marks it most recently used.
    public mutating func get(_ key: AssetKey) -> Asset? {
        guard let position = entries.index(forKey: key) else { return nil }
        clock &+= 1
        entries.values[position].stamp = clock  // one lookup, no copy of the entry
        recency.append((key, clock))
        if recency.count > 2 * entries.count + 64 { compact() }
        return entries.values[position].asset
    }

    /// Whether `key` is cached, without touching recency.
    public func contains(_ key: AssetKey) -> Bool { entries[key] != nil }

    /// Inserts or replaces, then evicts until within the limit. Returns how many entries were evicted.
    @discardableResult
    public mutating func insert(_ asset: Asset) -> Int {
        remove(asset.key)
        guard asset.memoryCost <= byteLimit else { return 0 }
        touch(asset.key, asset)
        totalBytes += asset.memoryCost
        var evicted = 0
        while totalBytes > byteLimit, let oldest = recency.popFirst() {
            guard let entry = entries[oldest.key], entry.stamp == oldest.stamp else { continue }  // stale use
            entries[oldest.key] = nil
            totalBytes -= entry.asset.memoryCost
            evicted += 1
        }
        return evicted
    }

    public mutating func remove(_ key: AssetKey) {
        if let old = entries.removeValue(forKey: key) {
            totalBytes -= old.asset.memoryCost
        }
    }

    /// Empties the cache; returns what was dropped.
    public mutating func removeAll() -> (entries: Int, bytes: Int) {
        let dropped = (entries.count, totalBytes)
        entries.removeAll()
        recency.removeAll()
        totalBytes = 0
        return dropped
    }

    private mutating func touch(_ key: AssetKey, _ asset: Asset) {
        clock &+= 1
        entries[key] = (asset, clock)
        recency.append((key, clock))
        if recency.count > 2 * entries.count + 64 { compact() }
    }

    /// Drops stale uses from the recency queue, keeping the live ones in order.
    private mutating func compact() {
        recency = Deque(recency.filter { entries[$0.key]?.stamp == $0.stamp })
    }
}
