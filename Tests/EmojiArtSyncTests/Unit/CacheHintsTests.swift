@testable import EmojiArtSync
import Testing

/// `CacheHints` against a real `MemoryCache`: a complete table answers "not cached" for a key it has no slot for,
/// and stops being complete at the first insert it did not see, so the cache is asked by key again.
struct CacheHintsTests {
    private func asset(_ n: Int) throws -> Asset {
        Asset(trustedOnDisk: try AssetKey(feedURL: "/gallery/image?\(n)"), size: 100)
    }

    @Test func aTableBegunOnAnEmptyCacheIsCompleteWhileItSeesEveryInsert() throws {
        var cache = MemoryCache(byteLimit: 1 << 20)
        var hints = CacheHints()
        hints.begin(version: 1, count: 3, cacheCount: cache.count, cacheInserts: cache.inserts)
        #expect(hints.isComplete(cacheInserts: cache.inserts))
        let first = try asset(1)
        hints.keepInserted(cache.insert(first).slot, at: 0, version: 1)
        #expect(hints.isComplete(cacheInserts: cache.inserts))

        var slot = hints.slot(at: 0, version: 1)
        #expect(cache.size(of: first.key, onlyAt: &slot) == first.size, "the hinted slot holds the key")
        #expect(cache.get(first.key, hint: &slot) == first)
        var none = hints.slot(at: 1, version: 1)
        #expect(none == -1)
        #expect(cache.size(of: try AssetKey(feedURL: "/gallery/image?2"), onlyAt: &none) == nil)

        // An insert the table did not see (a finished load): the table no longer vouches for absent keys.
        _ = cache.insert(try asset(2))
        #expect(!hints.isComplete(cacheInserts: cache.inserts))
        var byKey = hints.slot(at: 1, version: 1)
        #expect(cache.get(try AssetKey(feedURL: "/gallery/image?2"), hint: &byKey) != nil, "found by key")
    }

    @Test func aTableBegunOnACacheThatHoldsKeysIsNeverComplete() throws {
        var cache = MemoryCache(byteLimit: 1 << 20)
        _ = cache.insert(try asset(1))
        var hints = CacheHints()
        hints.begin(version: 2, count: 3, cacheCount: cache.count, cacheInserts: cache.inserts)
        #expect(!hints.isComplete(cacheInserts: cache.inserts))
    }

    @Test func anotherFeedsPositionIsNeitherReadNorKept() throws {
        var cache = MemoryCache(byteLimit: 1 << 20)
        var hints = CacheHints()
        hints.begin(version: 3, count: 2, cacheCount: cache.count, cacheInserts: cache.inserts)
        hints.keepInserted(cache.insert(try asset(1)).slot, at: 0, version: 2)
        #expect(hints.slot(at: 0, version: 3) == -1)
        #expect(!hints.isComplete(cacheInserts: cache.inserts), "an insert kept for another feed is not seen")
        #expect(hints.slot(at: 5, version: 3) == -1, "a position past the table is no slot")
    }

    @Test func aStaleSlotIsAMissNeverAnotherKeysAsset() throws {
        var cache = MemoryCache(byteLimit: 1 << 20)
        var hints = CacheHints()
        hints.begin(version: 1, count: 2, cacheCount: cache.count, cacheInserts: cache.inserts)
        let first = try asset(1)
        hints.keepInserted(cache.insert(first).slot, at: 0, version: 1)
        cache.remove(first.key)
        hints.keepInserted(cache.insert(try asset(2)).slot, at: 1, version: 1)  // reuses the freed slot
        var slot = hints.slot(at: 0, version: 1)
        #expect(cache.size(of: first.key, onlyAt: &slot) == nil)
        #expect(slot == -1)
    }
}
