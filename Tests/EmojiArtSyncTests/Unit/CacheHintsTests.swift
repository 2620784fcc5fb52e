@testable import EmojiArtSync
import Testing

/// `CacheHints` against a real `MemoryCache`: a complete table answers "not cached" for a key it has no slot for,
/// and stops being complete at the first insert it did not see, so the cache is asked by key again.
struct CacheHintsTests {
    private func asset(_ n: Int) throws -> Asset {
        Asset(trustedOnDisk: try AssetKey(feedURL: "/gallery/image?\(n)"), size: 100)
    }

    /// The keys `/gallery/image?1` ... `?count`, as a feed lists them.
    private func keys(_ count: Int, from first: Int = 1) throws -> [AssetKey] {
        try (first..<first + count).map { try AssetKey(feedURL: "/gallery/image?\($0)") }
    }

    @Test func aTableBegunOnAnEmptyCacheIsCompleteWhileItSeesEveryInsert() throws {
        var cache = MemoryCache(byteLimit: 1 << 20)
        var hints = CacheHints()
        hints.begin(version: 1, keys: try keys(3), cacheCount: cache.count, cacheInserts: cache.inserts)
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
        hints.begin(version: 2, keys: try keys(3), cacheCount: cache.count, cacheInserts: cache.inserts)
        #expect(!hints.isComplete(cacheInserts: cache.inserts))
    }

    @Test func anotherFeedsPositionIsNeitherReadNorKept() throws {
        var cache = MemoryCache(byteLimit: 1 << 20)
        var hints = CacheHints()
        hints.begin(version: 3, keys: try keys(2), cacheCount: cache.count, cacheInserts: cache.inserts)
        hints.keepInserted(cache.insert(try asset(1)).slot, at: 0, version: 2)
        #expect(hints.slot(at: 0, version: 3) == -1)
        #expect(!hints.isComplete(cacheInserts: cache.inserts), "an insert kept for another feed is not seen")
        #expect(hints.slot(at: 5, version: 3) == -1, "a position past the table is no slot")
    }

    @Test func aStaleSlotIsAMissNeverAnotherKeysAsset() throws {
        var cache = MemoryCache(byteLimit: 1 << 20)
        var hints = CacheHints()
        hints.begin(version: 1, keys: try keys(2), cacheCount: cache.count, cacheInserts: cache.inserts)
        let first = try asset(1)
        hints.keepInserted(cache.insert(first).slot, at: 0, version: 1)
        cache.remove(first.key)
        hints.keepInserted(cache.insert(try asset(2)).slot, at: 1, version: 1)  // reuses the freed slot
        var slot = hints.slot(at: 0, version: 1)
        #expect(cache.size(of: first.key, onlyAt: &slot) == nil)
        #expect(slot == -1)
    }

    @Test func aFeedListingTheSameKeysFirstKeepsTheSlotsAndAnotherBeginsAgain() throws {
        var cache = MemoryCache(byteLimit: 1 << 20)
        var hints = CacheHints()
        let first = try keys(3)
        hints.begin(version: 1, keys: first, cacheCount: cache.count, cacheInserts: cache.inserts)
        let second = try asset(2)
        hints.keepInserted(cache.insert(second).slot, at: 1, version: 1)

        // The next feed: the same keys (other objects, equal urls) and one more at the end.
        let grown = try keys(4)
        let carried = hints.carry(to: 2, keys: grown)
        #expect(carried)
        #expect(hints.isFor(version: 2, count: 4))
        var slot = hints.slot(at: 1, version: 2)
        #expect(slot >= 0, "the slot of position 1 is carried over")
        #expect(cache.get(second.key, hint: &slot) == second)
        #expect(hints.slot(at: 3, version: 2) == -1, "the new key has no slot")
        #expect(hints.isComplete(cacheInserts: cache.inserts), "every insert was seen")

        // A feed that lists another key first, or fewer keys: not carried.
        let shifted = hints.carry(to: 3, keys: try keys(4, from: 2))
        let shorter = hints.carry(to: 3, keys: try keys(2))
        #expect(!shifted && !shorter)
        #expect(hints.isFor(version: 2, count: 4), "a refused carry leaves the table as it was")
    }
}
