@testable import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A changed feed body decoded as its difference from the last one (`FeedDifference`) is exactly the body read
/// whole: the same keys, tags, listing positions, refusals and layout, over hundreds of random edits applied one
/// after another (each decode's result and kept body are the next one's `previous`, as in the agent), and no
/// answer at all where the whole read finds an error.
@Suite struct FeedDifferenceTests {
    /// The feed as items (each a JSON object's text) and the separators between them.
    private struct Model {
        var items: [String] = []
        var separators: [String] = []
        var nextKey = 0

        var body: [UInt8] {
            var text = "[\n"
            for (index, item) in items.enumerated() {
                if index > 0 { text += separators[(index - 1) % separators.count] }
                text += item
            }
            return Array((text + "\n]\n").utf8)
        }
    }

    private func checksum(_ random: inout SplitMix64) -> String {
        switch Int.random(in: 0..<10, using: &random) {
        case 0: return "plain-\(Int.random(in: 0..<1000, using: &random))"  // kept as text
        case 1: return "\\u0041BC-\(Int.random(in: 0..<100, using: &random))"  // an escape: decoded, then kept
        default:
            let hex = (0..<32).map { _ in "0123456789ABCDEF".randomElement(using: &random)! }
            let text = String(hex)
            let cuts = [8, 12, 16, 20].map { text.index(text.startIndex, offsetBy: $0) }
            return "\(text[..<cuts[0]])-\(text[cuts[0]..<cuts[1]])-\(text[cuts[1]..<cuts[2]])-\(text[cuts[2]..<cuts[3]])-\(text[cuts[3]...])"
        }
    }

    private func url(_ key: Int, _ random: inout SplitMix64) -> String {
        switch Int.random(in: 0..<40, using: &random) {
        case 0: return "/gallery/../secret/\(key)"  // refused
        case 1: return "\\/gallery\\/image\\/\(key).png"  // escaped slashes: the same key as the plain spelling
        default: return "/gallery/image/\(key).png"
        }
    }

    private func item(key: Int, _ random: inout SplitMix64) -> String {
        let extra = Int.random(in: 0..<20, using: &random) == 0 ? #","note":{"a":[1,2,{"b":null}]}"# : ""
        return #"{"checksum":"\#(checksum(&random))","name":"Art \#(key)","price":\#(key % 97).5,"url":"\#(url(key, &random))"\#(extra)}"#
    }

    /// One edit of the items, as a gallery makes them.
    private func edit(_ model: inout Model, _ random: inout SplitMix64) {
        let at = Int.random(in: 0..<model.items.count, using: &random)
        let someKey = Int.random(in: 0..<model.nextKey, using: &random)
        switch Int.random(in: 0..<9, using: &random) {
        case 0: model.items[at] = item(key: someKey, &random)  // another listing of a known key, maybe another tag
        case 1:
            model.items.insert(item(key: model.nextKey, &random), at: at)  // a new key
            model.nextKey += 1
        case 2: if model.items.count > 800 { model.items.remove(at: at) }
        case 3: model.items.insert(model.items[at], at: Int.random(in: 0...model.items.count, using: &random))
        case 4: model.items.swapAt(at, Int.random(in: 0..<model.items.count, using: &random))
        case 5: model.items[0] = item(key: someKey, &random)  // the first item
        case 6: model.items[model.items.count - 1] = item(key: someKey, &random)  // the last item
        case 7: model.items.removeFirst(min(3, model.items.count - 800))  // the first listings of some keys go
        default:
            let replaced = model.items[at]
            model.items[at] = replaced.replacingOccurrences(of: #""checksum":""#, with: #""checksum":"x"#)
        }
    }

    /// The bytes with one random damage or change: often not JSON any more, sometimes still valid.
    private func damaged(_ body: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        var bytes = body
        let at = Int.random(in: 0..<bytes.count, using: &random)
        switch Int.random(in: 0..<4, using: &random) {
        case 0: bytes[at] = "{}[],:\"\\ 0aZ\u{7F}".utf8.randomElement(using: &random)!
        case 1: bytes.insert(contentsOf: Array(#","{"#.utf8), at: at)
        case 2: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1..<200, using: &random)))
        default: bytes.removeSubrange(at...)
        }
        return bytes
    }

    private func expectSame(
        _ difference: (feed: GalleryFeed, layout: FeedLayout), _ whole: (feed: GalleryFeed, layout: FeedLayout),
        step: Int
    ) {
        /// Where two lists first differ, for a message that fits on a screen.
        func mismatch<T: Equatable>(_ left: [T], _ right: [T]) -> String? {
            guard left != right else { return nil }
            let at = left.indices.first { $0 >= right.count || left[$0] != right[$0] } ?? left.count
            return "counts \(left.count) and \(right.count), first difference at \(at): "
                + "\(at < left.count ? "\(left[at])" : "none") vs \(at < right.count ? "\(right[at])" : "none")"
        }
        let (left, right) = (difference.feed, whole.feed)
        let found = [
            mismatch(left.uniqueKeys.map(\.rawValue), right.uniqueKeys.map(\.rawValue)).map { "keys: \($0)" },
            mismatch(left.items.tags, right.items.tags).map { "tags: \($0)" },
            mismatch(left.entryPositions, right.entryPositions).map { "listings: \($0)" },
            mismatch(left.rejections.map { "\($0.url) \($0.reason)" }, right.rejections.map { "\($0.url) \($0.reason)" })
                .map { "refusals: \($0)" },
            mismatch(difference.layout.itemStarts, whole.layout.itemStarts).map { "item starts: \($0)" },
            mismatch(difference.layout.refusedItems, whole.layout.refusedItems).map { "refused items: \($0)" },
        ].compactMap { $0 }
        #expect(found.isEmpty, "step \(step): \(found.joined(separator: "; "))")
    }

    private func keep(_ body: [UInt8], layout: FeedLayout, as name: String, in dir: TemporaryDirectory) throws -> KeptFeedBody {
        let path = dir.file(name)
        try writeBytes(body, to: path)
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        try #require(descriptor >= 0)
        defer {
            close(descriptor)
            unlink(path)  // as the agent's body file goes: the kept body has no name
        }
        return try KeptFeedBody.keep(descriptor: descriptor, path: path, bodySize: body.count, layout: layout)
    }

    private func readWhole(_ body: [UInt8], known: [AssetKey]) -> (feed: GalleryFeed, layout: FeedLayout)? {
        body.withUnsafeBufferPointer { buffer in
            try? FeedReader.readWithLayout(buffer, known: known, maximumUniqueAssets: GalleryFeed.maximumUniqueAssets)
        }
    }

    @Test(arguments: [1 as UInt64, 2])
    func aChangedBodyDecodedAsADifferenceIsTheBodyReadWhole(seed: UInt64) throws {
        let dir = TemporaryDirectory("feed-difference")
        var random = SplitMix64(seed: seed)  // seeded: a failure names a step that can be replayed
        var model = Model(separators: [",", ", ", ",\n  ", " ,\t"])
        for _ in 0..<2_400 {
            model.items.append(item(key: model.nextKey, &random))
            model.nextKey += 1
        }
        // Listed again, about one key in three (the book's feed lists each three times).
        for _ in 0..<800 { model.items.insert(model.items.randomElement(using: &random)!, at: Int.random(in: 0...model.items.count, using: &random)) }
        var body = model.body
        #expect(body.count > FeedDifference.minimumBodySize)
        var previous = try #require(readWhole(body, known: []))
        var kept = try keep(body, layout: previous.layout, as: "kept-0", in: dir)
        var differences = 0, refusedBodies = 0, changedBodies = 0, sameBodies = 0
        for step in 1...80 {
            let probe = step % 4 == 0  // a damaged body: compared, never kept
            var edited = model
            if !probe { for _ in 0..<Int.random(in: 0...3, using: &random) { edit(&edited, &random) } }  // 0: the same
            let next = probe ? damaged(body, &random) : edited.body
            let whole = readWhole(next, known: previous.feed.uniqueKeys)
            let path = dir.file("next")
            try writeBytes(next, to: path)
            let mapped = try MappedFeedBody(path: path)
            let outcome = try FeedDifference.decode(
                mapped, previous: previous.feed, kept: kept, maximumUniqueAssets: GalleryFeed.maximumUniqueAssets)
            if next == body {
                #expect(outcome.map { if case .sameBytes = $0 { true } else { false } } == true, "step \(step): the same bytes")
                sameBodies += 1
                continue
            }
            var difference: (feed: GalleryFeed, layout: FeedLayout)?
            if case .decoded(let feed, let layout) = outcome { difference = (feed, layout) }
            guard let whole else {
                #expect(difference == nil, "step \(step): a body that does not read has no difference")
                refusedBodies += 1
                continue
            }
            if let difference {
                expectSame(difference, whole, step: step)
                differences += 1
            }
            if !probe { changedBodies += 1 }
            if !probe {
                // The next step compares with this one, as the agent does: its layout is the difference's own.
                model = edited
                body = next
                previous = difference ?? whole
                kept = try keep(body, layout: previous.layout, as: "kept-\(step)", in: dir)
            }
        }
        // An edit near both ends spans the body and is read whole; most others are differences.
        #expect(differences * 4 >= changedBodies, "edits decoded as differences: \(differences) of \(changedBodies)")
        #expect(sameBodies > 0, "no step left the body as it was")
        #expect(refusedBodies >= 5, "damaged bodies were tried (\(refusedBodies))")
    }

    @Test func aBodyChangedAllOverIsReadWhole() throws {
        let dir = TemporaryDirectory("feed-difference")
        var random = SplitMix64(seed: 9)
        var model = Model(separators: [","])
        for _ in 0..<3_000 {
            model.items.append(item(key: model.nextKey, &random))
            model.nextKey += 1
        }
        let first = try #require(readWhole(model.body, known: []))
        let kept = try keep(model.body, layout: first.layout, as: "kept", in: dir)
        model.items[0] = item(key: 0, &random)
        model.items[model.items.count - 1] = item(key: 1, &random)
        let path = dir.file("next")
        try writeBytes(model.body, to: path)
        let outcome = try FeedDifference.decode(
            try MappedFeedBody(path: path), previous: first.feed, kept: kept, maximumUniqueAssets: GalleryFeed.maximumUniqueAssets)
        #expect(outcome == nil, "the first and the last item changed: the difference would be the whole body")
    }
}
