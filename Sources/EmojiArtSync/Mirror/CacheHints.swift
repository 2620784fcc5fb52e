/// Where the memory cache holds each key of one feed, by the key's position in that feed (`FeedState`): a later
/// listing of the key looks in that slot (`MemoryCache.get(_:hint:)`) instead of hashing the key.
///
/// A slot is only a hint: the cache checks that it still holds the key, so a stale slot (the key evicted, the
/// cache purged, the slot reused) costs a miss of the hint, never a wrong answer. The table is also **complete**
/// while it has seen every insert the cache made since the table began, and the cache was empty then: a key the
/// table has no slot for is then known not to be cached, and the first listing of each key in a fresh process (a
/// warm `--once` of 100,000 keys) costs no hash either. Any insert it did not see (a finished load, a repair)
/// ends that, until the next feed's table: the cache is asked by key again.
///
/// A feed whose keys are the last one's in the same order, maybe with more after them (tags changed, items added at
/// the end), keeps the table (`carry(to:keys:)`): its positions name the same keys, so the slots are as good as
/// they were, and a pass over it hashes no key either.
///
/// A value owned by the `AccessPipeline`, in the silo.
struct CacheHints: Sendable {
    /// The catalogue's version of the feed whose positions index `slots`.
    private(set) var version: UInt64 = 0
    private var slots: [Int32] = []
    /// The feed's keys by position (the feed's own array, shared, not a copy): what `carry(to:keys:)` compares.
    private var keys: [AssetKey] = []
    /// The cache's insert count when the table began, and the inserts recorded here since.
    private var insertsAtStart: UInt64 = 0
    private var insertsSeen: UInt64 = 0
    private var startedWithEmptyCache = false

    /// Whether the table is `version`'s, for a feed of `count` keys.
    func isFor(version: UInt64, count: Int) -> Bool {
        self.version == version && slots.count == count
    }

    /// Starts the table of feed `version` with `count` keys; `cacheCount` and `cacheInserts` are the cache's
    /// entries and insert count now.
    mutating func begin(version: UInt64, keys: [AssetKey], cacheCount: Int, cacheInserts: UInt64) {
        self.version = version
        self.keys = keys
        slots = Array(repeating: -1, count: keys.count)
        insertsAtStart = cacheInserts
        insertsSeen = 0
        startedWithEmptyCache = cacheCount == 0
    }

    /// Makes the table feed `version`'s, whose keys are `keys`, if that feed lists this table's keys first, in the
    /// same order; returns whether it did (else the caller begins a new table). A key of the new feed's beyond
    /// them starts with no slot; the table stays complete if it was: an insert of such a key, made for another
    /// feed's position, was not seen and ended that already.
    mutating func carry(to version: UInt64, keys newKeys: [AssetKey]) -> Bool {
        guard !keys.isEmpty, newKeys.count >= keys.count else { return false }
        // Equal keys are most often the same objects (the decode reuses the last feed's): a pointer compare each.
        for position in keys.indices where keys[position] != newKeys[position] { return false }
        slots.append(contentsOf: repeatElement(-1, count: newKeys.count - keys.count))
        keys = newKeys
        self.version = version
        return true
    }

    /// Whether a key with no slot here is certainly not in the cache, whose insert count is `cacheInserts`.
    func isComplete(cacheInserts: UInt64) -> Bool {
        startedWithEmptyCache && cacheInserts &- insertsAtStart == insertsSeen
    }

    /// The slot the key at `position` of feed `version` was last found in (-1: none, or the table is another
    /// feed's: a pass over another feed may have replaced it while a batch waited for io).
    func slot(at position: Int32, version: UInt64) -> Int32 {
        self.version == version && Int(position) < slots.count ? slots[Int(position)] : -1
    }

    /// Keeps where a lookup found the key at `position` (-1: not cached).
    mutating func keep(_ slot: Int32, at position: Int32, version: UInt64) {
        guard self.version == version, Int(position) < slots.count else { return }
        slots[Int(position)] = slot
    }

    /// Keeps where one insert into the cache put the key at `position` (-1: not kept), and counts the insert
    /// as seen. An insert for another feed's position is not seen: the table is then no longer complete.
    mutating func keepInserted(_ slot: Int32, at position: Int32, version: UInt64) {
        guard self.version == version, Int(position) < slots.count else { return }
        slots[Int(position)] = slot
        insertsSeen &+= 1
    }
}
