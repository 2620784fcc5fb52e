import OrderedCollections

/// A least-recently-used map of assets bounded by the total size of their bytes.
///
/// A plain value type (the `ImageLoader` actor owns the one that matters). Inserting past the limit evicts
/// the least recently used assets first; an asset larger than the whole limit is not kept at all.
public struct MemoryCache: Sendable {
    public let byteLimit: Int
    public private(set) var totalBytes = 0
    /// Oldest first: the front is evicted first, a hit moves an entry to the back.
    private var entries: OrderedDictionary<AssetKey, Asset> = [:]

    public init(byteLimit: Int) {
        self.byteLimit = max(0, byteLimit)
    }

    public var count: Int { entries.count }

    /// Returns the asset and marks it most recently used.
    public mutating func get(_ key: AssetKey) -> Asset? {
        guard let asset = entries.removeValue(forKey: key) else { return nil }
        entries[key] = asset
        return asset
    }

    /// Whether `key` is cached, without touching recency.
    public func contains(_ key: AssetKey) -> Bool { entries[key] != nil }

    /// Inserts or replaces, then evicts until within the limit. Returns how many entries were evicted.
    @discardableResult
    public mutating func insert(_ asset: Asset) -> Int {
        remove(asset.key)
        guard asset.memoryCost <= byteLimit else { return 0 }
        entries[asset.key] = asset
        totalBytes += asset.memoryCost
        var evicted = 0
        while totalBytes > byteLimit, let oldest = entries.elements.first {
            entries.removeFirst()
            totalBytes -= oldest.value.memoryCost
            evicted += 1
        }
        return evicted
    }

    public mutating func remove(_ key: AssetKey) {
        if let old = entries.removeValue(forKey: key) {
            totalBytes -= old.memoryCost
        }
    }

    /// Empties the cache; returns what was dropped.
    public mutating func removeAll() -> (entries: Int, bytes: Int) {
        let dropped = (entries.count, totalBytes)
        entries.removeAll()
        totalBytes = 0
        return dropped
    }
}
