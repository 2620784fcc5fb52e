@testable import EmojiArtSync
import TestSupport
import Testing

/// A large feed read from its file's mapping (`MappedFeedBody`), whose pages are given back every 4 MiB as the
/// reader goes, decodes to exactly what the same bytes decode to in memory, errors included: a page given back
/// and read again (an error message quoting the body) comes back from the file.
@Suite struct MappedFeedBodyTests {
    /// A feed of `count` distinct items, each listed three times, about 110 bytes an item: 15,000 items are ~5 MB,
    /// past the first release step (4 MiB).
    private func feedBody(count: Int, tail: String = "]") -> [UInt8] {
        var text = "["
        for round in 0..<3 {
            for n in 1...count {
                if round > 0 || n > 1 { text += "," }
                let checksum = "\(String(n, radix: 16))-1111-2222-3333-444455556666"
                text += #"{"checksum":"\#(checksum)","name":"Item \#(n)","price":1.5,"url":"/gallery/image/\#(n).png"}"#
            }
        }
        return Array((text + tail).utf8)
    }

    private func write(_ bytes: [UInt8], in dir: TemporaryDirectory) throws -> String {
        let path = dir.file("feed.json")
        try writeBytes(bytes, to: path)
        return path
    }

    @Test func aMappedFeedDecodesAsTheSameBytesInMemory() throws {
        let dir = TemporaryDirectory("mapped-feed")
        let body = feedBody(count: 15_000)
        #expect(body.count > 4 * 1024 * 1024, "the feed must be past a release step to give pages back")
        let path = try write(body, in: dir)
        let mapped = try MappedFeedBody(path: path)
        #expect(mapped.count == body.count)
        let fromFile = try GalleryFeed.decode(mapped)
        let fromMemory = try GalleryFeed.decode(body)
        #expect(fromFile.entryCount == 45_000)
        #expect(fromFile.uniqueKeys == fromMemory.uniqueKeys)
        #expect(fromFile.entryPositions == fromMemory.entryPositions)
        #expect(fromFile.items.tags == fromMemory.items.tags)
    }

    @Test func anErrorNearTheEndOfAMappedFeedIsReportedAsInMemory() throws {
        let dir = TemporaryDirectory("mapped-feed-error")
        let body = feedBody(count: 15_000, tail: #",{"url": 5}]"#)
        let path = try write(body, in: dir)
        let fromFile = #expect(throws: SyncError.self) { try GalleryFeed.decode(try MappedFeedBody(path: path)) }
        let fromMemory = #expect(throws: SyncError.self) { try GalleryFeed.decode(body) }
        #expect(fromFile?.message == fromMemory?.message)
        #expect(fromFile?.message.contains("[45000]") == true, "\(fromFile?.message ?? "")")
    }

    @Test func anEmptyFileIsAnEmptyBodyNotACrash() throws {
        let dir = TemporaryDirectory("mapped-feed-empty")
        let path = try write([], in: dir)
        #expect(throws: SyncError.self) { try GalleryFeed.decode(try MappedFeedBody(path: path)) }
    }
}
