@testable import EmojiArtSync
import Testing

/// `SortedKeyEdits` keeps a sweep's list what a set of the same edits, sorted, would be: the last edit of a key
/// counts, a key added twice is listed once, removing an absent key changes nothing.
struct SortedKeyEditsTests {
    @Test func editsAppliedToASortedListAreTheSetsEditsSorted() throws {
        let keys = try (0..<60).map { try AssetKey(feedURL: "/gallery/image?\($0)") }
        var generator = SystemRandomNumberGenerator()
        for round in 0..<300 {
            var model = Set(keys.filter { _ in Bool.random(using: &generator) })
            let list = model.sorted()
            var edits = SortedKeyEdits()
            for _ in 0..<Int.random(in: 0..<12, using: &generator) {
                let key = keys.randomElement(using: &generator)!
                if Bool.random(using: &generator) {
                    edits.add(key)
                    model.insert(key)
                } else {
                    edits.remove(key)
                    model.remove(key)
                }
            }
            #expect(edits.applied(to: list) == model.sorted(), "round \(round)")
        }
    }
}
