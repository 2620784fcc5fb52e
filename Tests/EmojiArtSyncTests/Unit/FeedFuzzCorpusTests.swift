@testable import EmojiArtSync
import Foundation
import Testing

/// The feed fuzzer's seeds (`Tests/Fuzz/corpus/feed/`) and kept crashers (`Tests/Fuzz/crashers/feed/`) as
/// regression tests of the normal suite: each seed keeps its verdict, the streaming reader gives JSONDecoder's
/// verdict and the same feed, and every file is decoded without a trap into keys and file names that keep
/// the promises `contrib/fuzz/FeedFuzzer.swift` checks (docs/RELIABILITY.md, "Fuzzing").
@Suite("Feed fuzz corpus and crashers")
struct FeedFuzzCorpusTests {
    static func directory(_ kind: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz/\(kind)/feed")
    }

    static func files(_ kind: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory(kind).path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted()
    }

    /// What each seed decodes to: (accepted entries, refused items), or nil when the body is refused whole.
    static let seedVerdicts: [String: (entries: Int, rejections: Int)?] = [
        "gallery-feed-12.json": (36, 0), "one-item.json": (1, 0), "empty-array.json": (0, 0),
        "colliding-book-names.json": (4, 0), "hostile-urls.json": (0, 10), "bom-unicode-extra-field.json": (1, 0),
        "error-json.json": nil, "empty-body": nil, "price-as-string.json": nil, "missing-url.json": nil,
        "truncated.json": nil, "deep-nesting.json": nil, "url-only.txt": nil, "url-max-length.txt": nil,
    ]

    @Test("every seed has a known verdict, and the corpus has every seed")
    func seedsAreKnown() {
        #expect(Set(Self.files("corpus")) == Set(Self.seedVerdicts.keys))
    }

    @Test("each seed keeps its verdict", arguments: FeedFuzzCorpusTests.files("corpus"))
    func seedVerdict(name: String) throws {
        let body = [UInt8](try Data(contentsOf: Self.directory("corpus").appendingPathComponent(name)))
        let expected = try #require(Self.seedVerdicts[name], "unknown seed \(name): add its verdict")
        switch Result(catching: { () throws(SyncError) -> GalleryFeed in try GalleryFeed.decode(body) }) {
        case .success(let feed):
            let verdict = try #require(expected, "\(name) should be refused whole")
            #expect(feed.entries.count == verdict.entries)
            #expect(feed.rejections.count == verdict.rejections)
            let names = Set(feed.uniqueKeys.map(AssetFileName.name(for:)))
            #expect(names.count == feed.uniqueKeys.count, "distinct keys get distinct files")
        case .failure(let error):
            #expect(expected == nil, "\(name) was refused: \(error)")
            #expect(error.code == .feed)
        }
    }

    @Test("the streaming reader and JSONDecoder agree on every seed and crasher",
        arguments: FeedFuzzCorpusTests.files("corpus").map { ("corpus", $0) }
            + FeedFuzzCorpusTests.files("crashers").map { ("crashers", $0) })
    func agreesWithJSONDecoder(kind: String, name: String) throws {
        let body = [UInt8](try Data(contentsOf: Self.directory(kind).appendingPathComponent(name)))
        let streamed = Result { () throws(SyncError) -> GalleryFeed in try GalleryFeed.decode(body) }
        let reference = Result { () throws(SyncError) -> GalleryFeed in try GalleryFeed.decodeWithJSONDecoder(body) }
        switch (streamed, reference) {
        case (.success(let feed), .success(let expected)):
            #expect(feed.entries == expected.entries)
            #expect(feed.uniqueKeys == expected.uniqueKeys)
            #expect(feed.rejections == expected.rejections)
            #expect(feed.tags == expected.tags)
        case (.failure(let error), .failure):
            #expect(error.code == .feed)
            #expect(error.message.hasPrefix("feed is not a JSON array of {name, url, price, checksum}: at "))
        case (.success, .failure(let error)):
            Issue.record("\(name): the streaming reader accepts what JSONDecoder refuses: \(error)")
        case (.failure(let error), .success):
            Issue.record("\(name): the streaming reader refuses what JSONDecoder accepts: \(error)")
        }
    }

    @Test("every seed and crasher decodes or is refused, never traps",
        arguments: FeedFuzzCorpusTests.files("corpus").map { ("corpus", $0) }
            + FeedFuzzCorpusTests.files("crashers").map { ("crashers", $0) })
    func decodesOrRefuses(kind: String, name: String) throws {
        let body = [UInt8](try Data(contentsOf: Self.directory(kind).appendingPathComponent(name)))
        if let feed = try? GalleryFeed.decode(body) {
            for key in feed.entries {
                #expect(key.rawValue.hasPrefix("/") && !key.rawValue.hasPrefix("//") && !key.rawValue.contains(".."))
                let file = AssetFileName.name(for: key)
                #expect(file.hasSuffix(".png") && file.utf8.count <= 100 && !file.contains("/") && !file.hasPrefix("."))
            }
        }
        _ = try? AssetKey(feedURL: String(decoding: body, as: UTF8.self))
    }
}
