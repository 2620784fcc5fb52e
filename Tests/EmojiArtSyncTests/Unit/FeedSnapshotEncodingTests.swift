@testable import EmojiArtSync
import Testing

/// A feed snapshot (`FeedSnapshot`) gives back exactly the feed it was made of, and a file that is not one whole
/// snapshot of this format, cut short anywhere, damaged anywhere, or well checksummed but not a feed, is refused
/// with a reason, never read as a different feed and never a trap.
@Suite struct FeedSnapshotEncodingTests {
    /// A feed with every kind of tag (a small-letter UUID, a capital one, a mixed-case one kept as text, other
    /// text, none), a url with an escape-worthy byte, duplicates in another order, and refused urls.
    private func sampleFeed() throws -> GalleryFeed {
        let body = #"""
            [{"name":"a","url":"/gallery/image?1","price":1,"checksum":"0f8fad5b-d9cb-469f-a165-70867728950e"},
             {"name":"b","url":"/gallery/image?2","price":1,"checksum":"7C9E6679-7425-40DE-944B-E07FC1F90AE7"},
             {"name":"c","url":"/gallery/image?3","price":1,"checksum":"7c9E6679-7425-40de-944b-e07fc1f90ae7"},
             {"name":"d","url":"/gallery/image/d%20e.png","price":1,"checksum":"not a uuid ✓"},
             {"name":"x","url":"../../etc/passwd","price":1,"checksum":"x"},
             {"name":"c","url":"/gallery/image?3","price":1,"checksum":"later, ignored"},
             {"name":"a","url":"/gallery/image?1","price":1,"checksum":"0f8fad5b-d9cb-469f-a165-70867728950e"},
             {"name":"y","url":"","price":1,"checksum":"y"}]
            """#
        return try GalleryFeed.decode(Array(body.utf8))
    }

    private func snapshot(of feed: GalleryFeed) -> FeedSnapshot {
        FeedSnapshot(
            feed: feed, feedURL: "http://127.0.0.1:8080/gallery/images",
            validators: HTTPValidators(etag: #"W/"f-1""#, lastModified: "Fri, 27 Nov 2026 19:00:00 GMT"),
            bodyDigest: String(repeating: "ab", count: 32))
    }

    @Test func aSnapshotGivesBackTheFeedItWasMadeOf() throws {
        let feed = try sampleFeed()
        #expect(feed.rejections.count == 2, "the sample must carry refused urls")
        let original = snapshot(of: feed)
        let read = try FeedSnapshot.decode(original.encoded())
        #expect(read.feedURL == original.feedURL)
        #expect(read.validators == original.validators)
        #expect(read.bodyDigest == original.bodyDigest)
        let back = try read.feed()
        #expect(back.uniqueKeys == feed.uniqueKeys)
        #expect(back.uniqueKeys.map(\.fileName) == feed.uniqueKeys.map(\.fileName))
        #expect(back.entryPositions == feed.entryPositions)
        #expect(back.items.tags == feed.items.tags)
        #expect(back.items.tags.map { $0?.description } == feed.items.tags.map { $0?.description })
        #expect(back.rejections == feed.rejections)
        // No validators, and an empty feed, come back as such.
        let bare = FeedSnapshot(feed: try GalleryFeed.decode(Array("[]".utf8)), feedURL: "u", validators: HTTPValidators(etag: nil, lastModified: nil), bodyDigest: "d")
        let bareBack = try FeedSnapshot.decode(bare.encoded())
        #expect(bareBack.validators.isEmpty)
        #expect(try bareBack.feed().entryCount == 0)
    }

    @Test func aSnapshotCutShortAnywhereIsRefused() throws {
        let bytes = snapshot(of: try sampleFeed()).encoded()
        for length in 0..<bytes.count {
            #expect(throws: FeedSnapshot.SnapshotUnusable.self, "cut at \(length)") {
                try FeedSnapshot.decode(Array(bytes[..<length])).feed()
            }
        }
    }

    @Test func aSnapshotWithAnyByteChangedIsRefused() throws {
        let bytes = snapshot(of: try sampleFeed()).encoded()
        for offset in bytes.indices {
            var damaged = bytes
            damaged[offset] ^= 0x01
            #expect(throws: FeedSnapshot.SnapshotUnusable.self, "byte \(offset) changed") {
                try FeedSnapshot.decode(damaged).feed()
            }
        }
    }

    /// Bytes with a correct checksum that no snapshot writer made (a listing's position past the keys, a url a
    /// feed may not give): refused by `feed()`, which checks what it builds.
    @Test func aWellChecksummedSnapshotThatIsNoFeedIsRefused() throws {
        let good = snapshot(of: try sampleFeed()).encoded()
        let header = Array("emojiart-sync feed snapshot\n".utf8).count + 4 + 32
        func resealed(_ rest: [UInt8]) -> [UInt8] {
            Array(good[..<(header - 32)]) + SHA256Digest.bytes(of: rest) + rest
        }
        #expect(try FeedSnapshot.decode(resealed(Array(good[header...]))).feed().entryCount == 6, "resealing must keep a good snapshot good")
        // The last four bytes before the rejections are the last listing's position; the sample's last listing is
        // key 0 and there are 4 keys, so 9 is past them.
        var rest = Array(good[header...])
        let feed = try sampleFeed()
        var tail = 4  // the rejection count
        for rejection in feed.rejections { tail += 8 + rejection.url.utf8.count + rejection.reason.utf8.count }
        rest[rest.count - tail - 4] = 9
        let error = #expect(throws: FeedSnapshot.SnapshotUnusable.self) { try FeedSnapshot.decode(resealed(rest)).feed() }
        #expect(error?.description.contains("past its keys") == true, "\(String(describing: error))")
        // A url no feed may give, in place of the first key's (same length: "/gallery/image?1" -> "../gallery/imag1").
        var hostile = Array(good[header...])
        let url = Array("/gallery/image?1".utf8)
        let at = try #require(hostile.firstRange(of: url)).lowerBound
        hostile.replaceSubrange(at..<at + url.count, with: Array("../gallery/imag1".utf8))
        let refused = #expect(throws: FeedSnapshot.SnapshotUnusable.self) { try FeedSnapshot.decode(resealed(hostile)).feed() }
        #expect(refused?.description.contains("a url a feed may not give") == true, "\(String(describing: refused))")
    }
}
