@testable import EmojiArtSync
import Foundation
import Testing

func makeAsset(_ n: Int, size: Int) throws -> Asset {
    let bytes = [UInt8](repeating: UInt8(n & 0xFF), count: size)
    return Asset(key: try AssetKey(feedURL: "/gallery/image?\(n)"), bytes: bytes, sha256: Asset.digest(bytes), width: 1, height: 1)
}

@Suite struct MemoryCacheTests {
    @Test func evictsLeastRecentlyUsedFirstAndStaysWithinItsBound() throws {
        let cost = Asset.recordCost  // a record's allowance, whatever the asset's size: its bytes are not kept
        var cache = MemoryCache(byteLimit: 3 * cost)
        cache.insert(try makeAsset(1, size: 100))
        cache.insert(try makeAsset(2, size: 100))
        cache.insert(try makeAsset(3, size: 100))
        _ = cache.get(try AssetKey(feedURL: "/gallery/image?1"))  // 1 is now the most recent
        cache.insert(try makeAsset(4, size: 100))                  // evicts 2
        #expect(cache.totalBytes == 3 * cost)
        #expect(cache.contains(try AssetKey(feedURL: "/gallery/image?1")))
        #expect(!cache.contains(try AssetKey(feedURL: "/gallery/image?2")))
        #expect(cache.contains(try AssetKey(feedURL: "/gallery/image?4")))
    }

    /// A hint is where the caller last found a key: right, it is used; stale (the key evicted and its slot given to
    /// another key), the cache answers by the key itself and never with the other key's asset.
    @Test func aHintFindsItsKeyAndAStaleOneNeverAnswersForAnotherKey() throws {
        let cost = Asset.recordCost
        var cache = MemoryCache(byteLimit: 2 * cost)
        let one = try AssetKey(feedURL: "/gallery/image?1")
        var hint = cache.insert(try makeAsset(1, size: 100)).slot
        #expect(hint >= 0)
        let found = cache.get(one, hint: &hint)
        #expect(found?.key == one)
        cache.insert(try makeAsset(2, size: 100))
        cache.insert(try makeAsset(3, size: 100))  // evicts 1: its slot is free, then 3's
        #expect(!cache.contains(one))
        let stale = cache.get(one, hint: &hint)
        #expect(stale == nil, "a stale hint answered for another key")
        #expect(hint == -1)
        let three = try AssetKey(feedURL: "/gallery/image?3")
        var wrong: Int32 = 0  // a slot that holds another key, or none
        let first = cache.get(three, hint: &wrong)
        #expect(first?.key == three)
        let again = cache.get(three, hint: &wrong)
        #expect(again?.key == three, "the hint it was given back does not find the key")
    }

    @Test func aLimitBelowOneRecordKeepsNothing() throws {
        var cache = MemoryCache(byteLimit: Asset.recordCost - 1)
        #expect(cache.insert(try makeAsset(1, size: 1)).slot == -1)
        #expect(cache.count == 0 && cache.totalBytes == 0)
    }

    /// The cache keeps an asset's record: what a memory hit answers (key, size, dimensions), never its bytes or
    /// digest, however large the asset; an asset of unknown dimensions comes back without them.
    @Test func keepsTheRecordOfAnAssetNotItsBytes() throws {
        var cache = MemoryCache(byteLimit: 10 * Asset.recordCost)
        let large = try makeAsset(1, size: 100_000)
        let fetched = Asset(key: large.key, bytes: large.bytes!, sha256: large.sha256!, width: 360, height: 650)
        cache.insert(fetched)
        let hit = cache.get(large.key)
        let found = try #require(hit)
        #expect(found.key == large.key && found.size == 100_000 && found.width == 360 && found.height == 650)
        #expect(found.bytes == nil && found.sha256 == nil)
        #expect(cache.totalBytes == Asset.recordCost)
        let trusted = try AssetKey(feedURL: "/gallery/image?2")
        cache.insert(Asset(trustedOnDisk: trusted, size: 42))
        let again = cache.get(trusted)
        let record = try #require(again)
        #expect(record.size == 42 && record.width == nil && record.height == nil)
    }

    @Test func entriesWithoutBytesStillCountTowardsTheBound() throws {
        let key = try AssetKey(feedURL: "/gallery/image?1")
        var cache = MemoryCache(byteLimit: 1000)
        for n in 1...10 {
            cache.insert(Asset(trustedOnDisk: try AssetKey(feedURL: "/gallery/image?\(n)"), size: 50_000))
        }
        #expect(cache.count == 1000 / 256 && cache.totalBytes <= 1000)
        #expect(!cache.contains(key))
    }

    /// Thousands of random gets, inserts and removes against a plain list kept in recency order: the cache holds
    /// exactly the keys the list says, and evicts in its order.
    @Test func agreesWithAListInRecencyOrderOverRandomOperations() throws {
        let keys = try (0..<40).map { try AssetKey(feedURL: "/gallery/image?\($0)") }
        var cache = MemoryCache(byteLimit: 12 * Asset.recordCost + 10 * 64)
        var model: [(key: AssetKey, cost: Int)] = []  // most recent last
        var generator = SystemRandomNumberGenerator()
        for step in 0..<5_000 {
            let key = keys.randomElement(using: &generator)!
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<4:
                let found = cache.get(key) != nil
                let position = model.firstIndex { $0.key == key }
                #expect(found == (position != nil), "step \(step): get")
                if let position { model.append(model.remove(at: position)) }
            case 4..<9:
                let size = Int.random(in: 0...128, using: &generator)
                let bytes = [UInt8](repeating: 1, count: size)
                cache.insert(Asset(key: key, bytes: bytes, sha256: "00", width: 1, height: 1))
                model.removeAll { $0.key == key }
                model.append((key, Asset.recordCost))
                while model.reduce(0, { $0 + $1.cost }) > cache.byteLimit { model.removeFirst() }
            default:
                cache.remove(key)
                model.removeAll { $0.key == key }
            }
            #expect(cache.count == model.count, "step \(step): count")
            #expect(cache.totalBytes == model.reduce(0) { $0 + $1.cost }, "step \(step): bytes")
        }
        for key in keys { #expect(cache.contains(key) == model.contains { $0.key == key }) }
    }

    @Test func replacingAnEntryKeepsTheByteCountRight() throws {
        var cache = MemoryCache(byteLimit: 1000)
        cache.insert(try makeAsset(1, size: 100))
        cache.insert(try makeAsset(1, size: 300))
        #expect(cache.totalBytes == Asset.recordCost && cache.count == 1)
        #expect(cache.get(try AssetKey(feedURL: "/gallery/image?1"))?.size == 300, "the record was not replaced")
        #expect(cache.removeAll() == (entries: 1, bytes: Asset.recordCost))
        #expect(cache.totalBytes == 0)
    }
}

@Suite struct RetryPolicyTests {
    @Test func doublesUpToTheCap() {
        let policy = RetryPolicy(base: .seconds(2), cap: .seconds(300), jitter: 0.2)
        #expect(policy.delay(afterAttempt: 1, random: 0) == .seconds(2))
        #expect(policy.delay(afterAttempt: 2, random: 0) == .seconds(4))
        #expect(policy.delay(afterAttempt: 9, random: 0) == .seconds(300))
        #expect(policy.delay(afterAttempt: 1000, random: 0) == .seconds(300))
        let jittered = policy.delay(afterAttempt: 1, random: 1)
        #expect(abs(jittered.seconds - 1.6) < 0.001)
    }
}
