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

/// `sortedByURL()` orders keys as `sorted()` does, whatever their urls share: one long prefix, urls that are
/// prefixes of others, urls equal in the 8 bytes it copies and apart after them, lists too short to bother.
struct SortedByURLTests {
    @Test func keysSortedByACopyOfTheirURLsAreInTheOrderOfTheKeys() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ab/?.=09".utf8)
        let prefixes = ["/", "/gallery/image/", "/gallery/image?", "/gallery/image/12345678"]
        for round in 0..<200 {
            let prefix = prefixes.randomElement(using: &generator)!
            var urls = Set<String>()
            for _ in 0..<Int.random(in: 0..<300, using: &generator) {
                let length = Int.random(in: 0..<14, using: &generator)
                let tail = (0..<length).map { _ in alphabet.randomElement(using: &generator)! }
                let url = prefix + String(decoding: tail, as: UTF8.self)
                if (try? AssetKey(feedURL: url)) != nil { urls.insert(url) }
            }
            let keys = try urls.shuffled(using: &generator).map { try AssetKey(feedURL: $0) }
            #expect(keys.sortedByURL() == keys.sorted(), "round \(round), prefix \(prefix)")
            #expect(keys.sortedByURL().map(\.rawValue) == urls.sorted(), "round \(round), prefix \(prefix)")
        }
    }
}
