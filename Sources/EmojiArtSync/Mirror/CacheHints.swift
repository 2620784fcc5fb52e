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
/// A value owned by the `AccessPipeline`, in the silo.
struct CacheHints: Sendable {
    /// The catalogue's version of the feed whose positions index `slots`.
    private(set) var version: UInt64 = 0
    private var slots: [Int32] = []
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
    mutating func begin(version: UInt64, count: Int, cacheCount: Int, cacheInserts: UInt64) {
        self.version = version
        slots = Array(repeating: -1, count: count)
        insertsAtStart = cacheInserts
        insertsSeen = 0
        startedWithEmptyCache = cacheCount == 0
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
