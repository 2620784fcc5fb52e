@testable import EmojiArtSync
import Testing

@Suite struct KeyIndexTableTests {
    /// Inserts, replacements and removals in a random order, checked after each step against a dictionary: every
    /// key still in is found at its index, every key taken out is not found. Small tables, so that runs of
    /// occupied buckets wrap around the end and removals shift entries back across it.
    @Test func agreesWithADictionaryThroughInsertsReplacementsAndRemovals() throws {
        // A seeded linear congruential sequence: the same steps each run, so a failing step can be found again.
        var state: UInt64 = 7
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let keys = try (0..<600).map { try AssetKey(feedURL: "/gallery/image/\($0).png") }
        var table = KeyIndexTable()
        // Index `i` of the array the table points into holds `elements[i]`: a key, or nil for an index not in use.
        var elements: [AssetKey?] = []
        var model: [AssetKey: Int32] = [:]
        for step in 0..<20_000 {
            let key = keys[Int(next() % UInt64(keys.count))]
            if next() % 3 == 0 {
                let removed = table.remove(key, keyAt: { [elements] in elements[Int($0)]! })
                #expect(removed == model.removeValue(forKey: key), "step \(step)")
                if let removed { elements[Int(removed)] = nil }
            } else {
                elements.append(key)
                let index = Int32(elements.count - 1)
                let replaced = table.update(index, for: key, keyAt: { [elements] in elements[Int($0)]! })
                #expect(replaced == model.updateValue(index, forKey: key), "step \(step)")
                if let replaced { elements[Int(replaced)] = nil }
            }
            #expect(table.count == model.count)
            if step % 500 == 0 {
                for key in keys {
                    let found = table.index(of: key, keyAt: { [elements] in elements[Int($0)]! })
                    #expect(found == model[key])
                }
            }
        }
        #expect(table.capacity >= table.count)
    }

    /// A feed's table finds each of its keys at its position, and no other key: also after a snapshot reads it
    /// back, whose keys are other objects with the same urls.
    @Test func aFeedFindsEachKeyAtItsPositionAndRefusesARepeatedOne() throws {
        let keys = try (0..<5_000).map { try AssetKey(feedURL: "/gallery/image/\($0).png") }
        let feed = try FeedState(distinctKeys: keys, tags: [FeedTag?](repeating: nil, count: keys.count))
        for (position, key) in keys.enumerated() {
            let sameURL = try AssetKey(feedURL: key.rawValue)
            #expect(feed.position(of: sameURL) == position)
        }
        let another = try AssetKey(feedURL: "/gallery/image/5000.png")
        #expect(feed.position(of: another) == nil)
        let repeated = keys + [keys[17]]
        let tags = [FeedTag?](repeating: nil, count: repeated.count)
        #expect(throws: FeedState.RepeatedKey.self) { try FeedState(distinctKeys: repeated, tags: tags) }
    }
}
