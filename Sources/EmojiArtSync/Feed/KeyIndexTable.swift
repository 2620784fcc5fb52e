/// Finds a key's index in an array its owner keeps (a feed's keys, the memory cache's slots) in 4 bytes a bucket,
/// where a `[AssetKey: Int32]` takes 12 (the key's reference beside the value, and a capacity that is a power of
/// two at most three quarters full): at 100,000 keys about 1 MiB instead of 3.
///
/// Open addressing with linear probing, at most half full. A bucket holds only the index: the key is read back from
/// the owner's array (`keyAt`) to compare, so the table never disagrees with the array it indexes as long as the
/// owner changes both together. A key's bucket comes from the hash its storage keeps (`AssetKey.urlHash`), so a
/// probe hashes nothing. Removal shifts the entries after the hole back (no tombstones), so a table that churns
/// (the cache's evictions) stays as short to probe as a fresh one.
struct KeyIndexTable: Sendable {
    /// An index, or `empty`. Its count is a power of two, at least twice `count`.
    private var buckets: [Int32]
    private(set) var count = 0
    private static let empty: Int32 = -1

    /// A table with room for `capacity` keys before it grows.
    init(capacity: Int = 0) {
        buckets = Array(repeating: Self.empty, count: Self.bucketCount(for: capacity))
    }

    private static func bucketCount(for capacity: Int) -> Int {
        var size = 8
        while size < capacity * 2 { size <<= 1 }
        return size
    }

    /// The index of `key`, whose array holds `keyAt(index)` at each index the table has.
    func index(of key: AssetKey, keyAt: (Int32) -> AssetKey) -> Int32? {
        index(hash: key.urlHash) { keyAt($0) == key }
    }

    /// The index of the key whose url hashes to `hash` (`AssetKey.hash(ofURL:)`) and for which `isKey` holds: a
    /// lookup by a url's bytes that makes no key to look up with.
    func index(hash: Int, where isKey: (Int32) -> Bool) -> Int32? {
        buckets.withUnsafeBufferPointer { buckets in
            let mask = buckets.count - 1
            var bucket = hash & mask
            while true {
                let index = buckets[bucket]
                if index == Self.empty { return nil }
                if isKey(index) { return index }
                bucket = (bucket + 1) & mask
            }
        }
    }

    /// Makes `index` the index of `key`; returns the index it replaced, nil when `key` was not in the table.
    @discardableResult
    mutating func update(_ index: Int32, for key: AssetKey, keyAt: (Int32) -> AssetKey) -> Int32? {
        precondition(index >= 0, "an index is never negative")
        if (count + 1) * 2 > buckets.count { grow(to: buckets.count * 2, keyAt: keyAt) }
        let mask = buckets.count - 1
        var bucket = key.urlHash & mask
        while true {
            let found = buckets[bucket]
            if found == Self.empty {
                buckets[bucket] = index
                count += 1
                return nil
            }
            if keyAt(found) == key {
                buckets[bucket] = index
                return found
            }
            bucket = (bucket + 1) & mask
        }
    }

    /// Takes `key` out; returns its index, nil when it was not in the table. `keyAt` must still give the key at
    /// every index the table holds (the caller frees the removed index's element after this returns).
    @discardableResult
    mutating func remove(_ key: AssetKey, keyAt: (Int32) -> AssetKey) -> Int32? {
        let mask = buckets.count - 1
        var hole = key.urlHash & mask
        while true {
            let found = buckets[hole]
            if found == Self.empty { return nil }
            if keyAt(found) == key { break }
            hole = (hole + 1) & mask
        }
        let removed = buckets[hole]
        // Backward shift: an entry after the hole that probing from its own bucket would pass the hole to reach
        // moves into it, until an empty bucket ends the run.
        var next = hole
        while true {
            next = (next + 1) & mask
            let moving = buckets[next]
            if moving == Self.empty { break }
            let home = keyAt(moving).urlHash & mask
            if (next &- home) & mask >= (next &- hole) & mask {
                buckets[hole] = moving
                hole = next
            }
        }
        buckets[hole] = Self.empty
        count -= 1
        return removed
    }

    /// Makes room for `capacity` keys in all, so that filling the table does not grow it step by step.
    mutating func reserveCapacity(_ capacity: Int, keyAt: (Int32) -> AssetKey) {
        let size = Self.bucketCount(for: capacity)
        if size > buckets.count { grow(to: size, keyAt: keyAt) }
    }

    /// Room for how many keys the table holds before it grows.
    var capacity: Int { buckets.count / 2 }

    mutating func removeAll() {
        buckets = Array(repeating: Self.empty, count: Self.bucketCount(for: 0))
        count = 0
    }

    private mutating func grow(to size: Int, keyAt: (Int32) -> AssetKey) {
        let old = buckets
        buckets = Array(repeating: Self.empty, count: size)
        let mask = size - 1
        for index in old where index != Self.empty {
            var bucket = keyAt(index).urlHash & mask
            while buckets[bucket] != Self.empty { bucket = (bucket + 1) & mask }
            buckets[bucket] = index
        }
    }
}
