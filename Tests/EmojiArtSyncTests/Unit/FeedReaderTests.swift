@testable import EmojiArtSync
import Foundation
import Testing

/// The streaming feed reader (`GalleryFeed.decode`): the same feed as JSONDecoder gave, JSON read strictly,
/// readable refusals. The fuzz corpus comparison is in `FeedFuzzCorpusTests`.
@Suite struct FeedReaderTests {
    static let rest = #""name":"n","price":1.5,"checksum":"c""#

    static func decode(_ json: String) -> Result<GalleryFeed, SyncError> {
        let body = Array(json.utf8)
        return Result { () throws(SyncError) -> GalleryFeed in try GalleryFeed.decode(body) }
    }

    static func reference(_ bytes: [UInt8]) -> Result<GalleryFeed, SyncError> {
        Result { () throws(SyncError) -> GalleryFeed in try GalleryFeed.decodeWithJSONDecoder(bytes) }
    }

    /// Both decoders accept `json` and give the same feed; returns it.
    static func sameAsJSONDecoder(_ json: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> GalleryFeed {
        let feed = try decode(json).get()
        let expected = try reference(Array(json.utf8)).get()
        #expect(feed.entries == expected.entries, sourceLocation: sourceLocation)
        #expect(feed.uniqueKeys == expected.uniqueKeys, sourceLocation: sourceLocation)
        #expect(feed.rejections == expected.rejections, sourceLocation: sourceLocation)
        #expect(feed.tags == expected.tags, sourceLocation: sourceLocation)
        return feed
    }

    @Test func keepsOnlyURLAndChecksumInFeedOrderWithTheFirstTagOfEachKey() throws {
        let feed = try Self.sameAsJSONDecoder("""
            [{"checksum":"A","name":"x","price":1,"url":"/gallery/image?2"},
             {"url":"/gallery/image?1","name":"y","price":2e3,"checksum":"B","extra":{"deep":[1,{"k":null}],"t":true}},
             {"name":"x","url":"/gallery/image?2","price":-0.5,"checksum":"C"},
             {"name":"z","url":"http://evil.example/x","price":0,"checksum":"D"},
             {"name":"z","url":"http://evil.example/x","price":0,"checksum":"D"}]
            """)
        #expect(feed.entries.map(\.rawValue) == ["/gallery/image?2", "/gallery/image?1", "/gallery/image?2"])
        #expect(feed.uniqueKeys.map(\.rawValue) == ["/gallery/image?2", "/gallery/image?1"])
        #expect(feed.tags.mapKeys(\.rawValue) == ["/gallery/image?2": "A", "/gallery/image?1": "B"])
        #expect(feed.rejections.map(\.url) == ["http://evil.example/x", "http://evil.example/x"])
    }

    @Test func escapesAreDecodedInURLsKeysAndTags() throws {
        // "\/" and "\u0041" in a url, an escaped key name, a surrogate pair in a tag.
        let feed = try Self.sameAsJSONDecoder(#"""
            [{"u\u0072l":"\/gallery\/image?\u0031","name":"\ud83d\ude80","price":1,"checksum":"\ud83d\ude80\n"},
             {"url":"/gallery/image?1","name":"n","price":1,"checksum":"later"}]
            """#)
        #expect(feed.entries.map(\.rawValue) == ["/gallery/image?1", "/gallery/image?1"])
        #expect(feed.tags.first?.value == "\u{1F680}\n")
    }

    @Test func theFirstOfDuplicateKeysCountsAndLaterOnesAreOnlyChecked() throws {
        let feed = try Self.sameAsJSONDecoder(
            #"[{"url":"/gallery/image?1","url":null,"checksum":"first","checksum":5,\#(Self.rest),"name":[],"price":"x"}]"#)
        #expect(feed.entries.map(\.rawValue) == ["/gallery/image?1"])
        #expect(feed.tags.first?.value == "first")
        // The first occurrence decides the type check too.
        #expect(throws: SyncError.self) { try Self.decode(#"[{"url":null,"url":"/gallery/image?1",\#(Self.rest)}]"#).get() }
    }

    @Test func keysOfTheLastFeedAreReused() throws {
        let last = try GalleryFeed.decode(Array(#"[{"url":"/gallery/image?7",\#(Self.rest)}]"#.utf8))
        let feed = try GalleryFeed.decode(
            Array(#"[{"url":"/gallery/image?8",\#(Self.rest)},{"url":"/gallery/image?7",\#(Self.rest)}]"#.utf8),
            known: last.uniqueKeys)
        #expect(feed.uniqueKeys.map(\.rawValue) == ["/gallery/image?8", "/gallery/image?7"], "known keys count only once they appear")
        #expect(feed.uniqueKeys.last?.fileName == last.uniqueKeys[0].fileName)
    }

    @Test func refusalsSayWhereAndWhy() {
        let cases: [(String, String)] = [
            (#"[{"url":"/gallery/image?1",\#(Self.rest)},{"url":5,\#(Self.rest)}]"#,
                "at [1].url (line 1, column 74): expected a string, found a number"),
            (#"[{"url":"/a",\#(Self.rest)}, {"url":"/b","name":"n","price":1}]"#, #"at [1] (line 1, column 86): no "checksum" key"#),
            (#"{"error": "File not found."}"#, "at line 1, column 1: expected a JSON array, found an object"),
            ("[\n  {\"url\":\"/a\",\(Self.rest),\"x\":[1,]}]", "at [0].x (line 2, column 59): trailing comma before ']'"),
            (#"[{"url":"/a",\#(Self.rest)}] x"#, "at line 1, column 54: found 'x' after the array; only whitespace may follow it"),
            (#"[{"url":"/a","price":1e400,"name":"n","checksum":"c"}]"#, "at [0].price (line 1, column 22): the number 1e400 is not representable as a Double"),
        ]
        for (json, expected) in cases {
            let message = (try? Self.decode(json).get()).map { "accepted: \($0.entries)" }
                ?? Self.decode(json).failureMessage
            #expect(message == "feed is not a JSON array of {name, url, price, checksum}: \(expected)", "\(json)")
        }
    }

    /// Where JSONDecoder only scans a value it does not decode, the reader still validates it: these bodies
    /// are not JSON (RFC 8259), JSONDecoder accepts them, the reader refuses them, saying why.
    @Test(arguments: [
        (#"{"url":"/a","x":[1,],"#, "trailing comma"), (#"{"url":"/a","x":"\q","#, "invalid escape \\q"),
        (#"{"url":"/a","x":"\ud800","#, "unpaired high surrogate"), ("{\"url\":\"/a\",\"x\":\"\u{01}\",", "control character U+0001"),
        (#"{"url":"/a","x":01,"#, "invalid number \"01\""), (#"{"url":"/a","x":-,"#, "invalid number"),
        (#"{"url":"/a","x":1.2.3,"#, #"invalid number "1.2.""#),
    ])
    func stricterThanJSONDecoderOnSkippedValues(item: String, reason: String) throws {
        let json = "[\(item)\(Self.rest)}]"
        #expect(throws: Never.self) { try Self.reference(Array(json.utf8)).get() }
        #expect(Self.decode(json).failureMessage.contains(reason), "\(Self.decode(json).failureMessage)")
    }

    /// JSONDecoder refuses some zeros written with an exponent (`0e3`, `0E1`, `-0.0e5`; not `0e10` or `0e-3`):
    /// swift-foundation's check for a number that underflowed to zero reads a short tail in reverse. They are
    /// JSON, and the reader accepts them; found by the fuzzer's differential check.
    @Test(arguments: ["0e3", "0E1", "-0.0e5", "0.000e5"])
    func zerosWithAnExponentAreNumbers(price: String) throws {
        let json = #"[{"url":"/gallery/image?1","name":"n","price":\#(price),"checksum":"c"}]"#
        #expect(try Self.decode(json).get().entries.map(\.rawValue) == ["/gallery/image?1"])
        #expect(throws: SyncError.self) { try Self.reference(Array(json.utf8)).get() }
    }

    @Test(arguments: [[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]] as [[UInt8]])
    func badUTF8IsRefusedInAnyString(_ sequence: [UInt8]) {
        for (prefix, suffix) in [(#"[{"x":""#, #"","url":"/a",\#(Self.rest)}]"#), (#"[{"url":"/a","name":"#, "\",\"price\":1,\"checksum\":\"c\"}]")] {
            var body = Array(prefix.utf8)
            if prefix.hasSuffix(":") { body.append(UInt8(ascii: "\"")) }
            body += sequence + Array(suffix.utf8)
            let result = Result { () throws(SyncError) -> GalleryFeed in try GalleryFeed.decode(body) }
            #expect(result.failureMessage.contains("invalid UTF-8"), "\(result.failureMessage)")
        }
    }

    @Test func aByteOrderMarkIsSkippedAndUTF16IsRefused() throws {
        let json = #"[{"url":"/a",\#(Self.rest)}]"#
        #expect(try GalleryFeed.decode([0xEF, 0xBB, 0xBF] + Array(json.utf8)).entries.count == 1)
        let utf16: [UInt8] = [0xFF, 0xFE] + json.utf16.flatMap { unit -> [UInt8] in [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        let result = Result { () throws(SyncError) -> GalleryFeed in try GalleryFeed.decode(utf16) }
        #expect(result.failureMessage.contains("not UTF-8"))
    }

    /// Nesting: JSONDecoder's limit, 512 levels counting the top array (1) and the item (2), holds in skipped
    /// values too, and the reader skips them without recursion.
    @Test func nestingIsRefusedAtJSONDecodersDepth() throws {
        func nested(_ levels: Int) -> String {
            "[{\"url\":\"/a\",\"x\":" + String(repeating: "[{\"k\":", count: levels / 2) + "1"
                + String(repeating: "}]", count: levels / 2) + ",\(Self.rest)}]"
        }
        _ = try Self.sameAsJSONDecoder(nested(510))
        #expect(throws: SyncError.self) { try Self.reference(Array(nested(512).utf8)).get() }
        #expect(Self.decode(nested(512)).failureMessage.contains("nested deeper than 512 levels"))
        #expect(Self.decode(nested(100_000)).failureMessage.contains("nested deeper than 512 levels"))
    }

    @Test func moreUniqueAssetsThanTheLimitAreRefused() throws {
        func feed(_ count: Int) -> [UInt8] {
            Array(("[" + (1...count).map { #"{"url":"/i?\#($0)",\#(Self.rest)}"# }.joined(separator: ",") + "]").utf8)
        }
        #expect(try GalleryFeed.decode(feed(GalleryFeed.maximumUniqueAssets)).uniqueKeys.count == GalleryFeed.maximumUniqueAssets)
        let result = Result { () throws(SyncError) -> GalleryFeed in try GalleryFeed.decode(feed(GalleryFeed.maximumUniqueAssets + 1)) }
        #expect(result.failureMessage == "feed lists more than 100000 unique assets; refusing it")
    }
}

extension Result where Failure == SyncError {
    /// The error's message, or "" when it succeeded.
    var failureMessage: String {
        if case .failure(let error) = self { return error.message }
        return ""
    }
}

extension Dictionary {
    func mapKeys<Mapped: Hashable>(_ transform: (Key) -> Mapped) -> [Mapped: Value] {
        Dictionary<Mapped, Value>(uniqueKeysWithValues: map { (transform($0.key), $0.value) })
    }
}
