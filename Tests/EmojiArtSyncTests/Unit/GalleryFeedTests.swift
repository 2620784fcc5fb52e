@testable import EmojiArtSync
import Foundation
import Logging
import Testing

@Suite struct GalleryFeedTests {
    @Test func decodesTheBookFeedKeepingDuplicates() throws {
        let json = """
            [{"name":"a","url":"/gallery/image?1","price":1.5,"checksum":"X"},
             {"name":"b","url":"/gallery/image?2","price":2,"checksum":"Y"},
             {"name":"a","url":"/gallery/image?1","price":1.5,"checksum":"X"}]
            """
        let feed = try GalleryFeed.decode(Array(json.utf8))
        #expect(feed.entries.map(\.rawValue) == ["/gallery/image?1", "/gallery/image?2", "/gallery/image?1"])
        #expect(feed.uniqueKeys.map(\.rawValue) == ["/gallery/image?1", "/gallery/image?2"])
        #expect(feed.rejections.isEmpty)
    }

    @Test func refusesHostileItemsOneByOne() throws {
        let json = """
            [{"name":"ok","url":"/gallery/image?1","price":1,"checksum":"X"},
             {"name":"evil","url":"http://evil.example/x","price":1,"checksum":"X"},
             {"name":"up","url":"/../../etc/passwd","price":1,"checksum":"X"}]
            """
        let feed = try GalleryFeed.decode(Array(json.utf8))
        #expect(feed.entries.map(\.rawValue) == ["/gallery/image?1"])
        #expect(feed.rejections.map(\.url) == ["http://evil.example/x", "/../../etc/passwd"])
    }

    @Test(arguments: [
        #"{"error": "File not found."}"#, "", "[1,2,3]", #"[{"name":"x"}]"#, "[{\"url\": 5}]", "\u{0}\u{1}garbage",
    ])
    func refusesBodiesThatAreNotAFeed(_ body: String) {
        #expect(throws: SyncError.self) { try GalleryFeed.decode(Array(body.utf8)) }
    }

    @Test func anEmptyArrayIsAnEmptyFeed() throws {
        #expect(try GalleryFeed.decode(Array("[]".utf8)).entries.isEmpty)
    }
}

@Suite struct LogfmtFormatterTests {
    @Test func quotesOnlyWhatNeedsQuoting() {
        #expect(LogfmtFormatter.quote("/gallery/image?3") == "/gallery/image?3")
        #expect(LogfmtFormatter.quote("two words") == "\"two words\"")
        #expect(LogfmtFormatter.quote("a=b") == "\"a=b\"")
        #expect(LogfmtFormatter.quote("") == "\"\"")
    }

    /// Every control character is escaped (the short escapes where JSON has them, `\u00XX` otherwise); other
    /// characters, multi-byte ones included, are copied as they are.
    @Test func quotingEscapesEveryControlCharacterAndKeepsTheRest() {
        for byte in UInt8(0)..<0x20 {
            let scalar = Unicode.Scalar(byte)
            let expected: String =
                switch byte {
                case 0x0A: #""\n""#
                case 0x0D: #""\r""#
                case 0x09: #""\t""#
                default: "\"\\u00" + String(byte, radix: 16).leftPadded(to: 2) + "\""
                }
            #expect(LogfmtFormatter.quote("\(Character(scalar))") == expected, "byte \(byte)")
        }
        #expect(LogfmtFormatter.quote("\u{7F}") == #""\u007f""#)
        #expect(LogfmtFormatter.quote("é ☃ 🎨") == "\"é ☃ 🎨\"")
        #expect(LogfmtFormatter.quote("a b\u{2028}") == "\"a b\u{2028}\"")  // logfmt keeps it; the JSON format escapes it
        #expect(LogfmtFormatter.quote(#"back\slash "q""#) == #""back\\slash \"q\"""#)
        let json = LogFormat.json.line(
            timestamp: .init(timeIntervalSince1970: 0), level: .info, message: "m", metadata: ["key": "a\u{2028}b\u{2029}c☃"])
        #expect(json.contains(#""key":"a\u2028b\u2029c☃""#), "\(json)")
    }

    @Test func aHostileValueCannotForgeASecondLine() {
        let line = LogfmtFormatter.line(
            timestamp: .init(timeIntervalSince1970: 0), level: .info, message: "m",
            metadata: ["event": "asset", "key": "/x\nts=0 level=error event=forged", "quote": "say \"hi\""])
        #expect(!line.contains("\n"))
        #expect(line.hasPrefix("ts=1970-01-01T00:00:00.000Z level=info msg=m event=asset "))
        #expect(line.contains(#"key="/x\nts=0 level=error event=forged""#))
        #expect(line.contains(#"quote="say \"hi\"""#))
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
