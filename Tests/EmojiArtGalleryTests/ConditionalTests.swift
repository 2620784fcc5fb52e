import EmojiArtGallery
import Foundation
import Synchronization
import TestSupport
import Testing

@Suite("ETag, Last-Modified and 304 Not Modified, over raw HTTP", .timeLimit(.minutes(1)))
struct ConditionalTests {
    @Test("the feed carries a weak ETag and Last-Modified; a matching If-None-Match or If-Modified-Since gets 304, no body")
    func feedNotModified() async throws {
        let records = RecordList()
        try await withGallery(requestLogger: { records.append($0) }) { _, baseURL in
            let first = try await RawHTTP.get(baseURL, "/gallery/images")
            #expect(first.status == 200)
            let etag = try #require(first.headers["etag"])
            let lastModified = try #require(first.headers["last-modified"])
            #expect(etag.hasPrefix("W/\"f-"))
            // Shuffled afresh, same meaning: same tag.
            let second = try await RawHTTP.get(baseURL, "/gallery/images")
            #expect(second.body != first.body)
            #expect(second.headers["etag"] == etag)

            let byTag = try await RawHTTP.get(baseURL, "/gallery/images", headers: [("If-None-Match", etag)])
            #expect(byTag.status == 304)
            #expect(byTag.body.isEmpty)
            #expect(byTag.headers["etag"] == etag)
            try #require(await eventually(timeout: .seconds(10)) { records.all.contains { $0.path == "/gallery/images" && $0.status == 304 && $0.bytes == 0 } })

            let byDate = try await RawHTTP.get(baseURL, "/gallery/images", headers: [("If-Modified-Since", lastModified)])
            #expect(byDate.status == 304)
            #expect(byDate.body.isEmpty)

            // If-None-Match decides alone when present, even with a matching date.
            let otherTag = try await RawHTTP.get(
                baseURL, "/gallery/images", headers: [("If-None-Match", "W/\"f-other\""), ("If-Modified-Since", lastModified)])
            #expect(otherTag.status == 200)
            let oldDate = try await RawHTTP.get(
                baseURL, "/gallery/images", headers: [("If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT")])
            #expect(oldDate.status == 200)
        }
    }

    @Test(
        "the feed's ETag and Last-Modified change with its content: empty feed, generation, a dropped item, image faults",
        arguments: [
            GalleryFaults(emptyFeed: true), GalleryFaults(generation: 1), GalleryFaults(droppedItems: [3]),
            GalleryFaults(imageFaults: [3: .corrupt]), GalleryFaults(extraFeedURLs: ["/gallery/image?999"]),
        ])
    func feedTagFollowsContent(faults: GalleryFaults) async throws {
        try await withGallery { server, baseURL in
            let before = try await RawHTTP.get(baseURL, "/gallery/images")
            let etag = try #require(before.headers["etag"])
            let lastModified = try #require(before.headers["last-modified"])
            server.setFaults(faults)
            let after = try await RawHTTP.get(
                baseURL, "/gallery/images", headers: [("If-None-Match", etag)])
            #expect(after.status == 200)
            #expect(after.headers["etag"] != etag)
            let byDate = try await RawHTTP.get(baseURL, "/gallery/images", headers: [("If-Modified-Since", lastModified)])
            #expect(byDate.status == 200)
            #expect(try #require(after.headers["last-modified"]).isEmpty == false)
            // The latency is not content: changing only it keeps the tag.
            var slower = faults
            slower.latencyMilliseconds = 1
            let newTag = try #require(after.headers["etag"])
            server.setFaults(slower)
            #expect(try await RawHTTP.get(baseURL, "/gallery/images", headers: [("If-None-Match", newTag)]).status == 304)
            // Back to no faults: a new change, a new date, but the tag of the old content.
            server.setFaults(.none)
            let back = try await RawHTTP.get(baseURL, "/gallery/images", headers: [("If-None-Match", etag)])
            #expect(back.status == 304)
        }
    }

    @Test("a dropped item leaves the feed; the empty feed has its own tag")
    func droppedItemLeavesFeed() async throws {
        try await withGallery(count: 5, faults: GalleryFaults(droppedItems: [2])) { _, baseURL in
            let response = try await RawHTTP.get(baseURL, "/gallery/images")
            let items = try JSONDecoder().decode([GalleryItem].self, from: Data(response.body))
            #expect(Set(items.map(\.url)) == ["/gallery/image?1", "/gallery/image?3", "/gallery/image?4", "/gallery/image?5"])
            #expect(items.count == 12)
        }
    }

    @Test("a restart (new checksums) changes the feed's tag")
    func restartChangesFeedTag() async throws {
        let first = try await withGallery { _, baseURL in try await RawHTTP.get(baseURL, "/gallery/images").headers["etag"] }
        let second = try await withGallery { _, baseURL in try await RawHTTP.get(baseURL, "/gallery/images").headers["etag"] }
        #expect(first != nil && second != nil && first != second)
    }

    @Test("while an image is `changing`, every feed and every changing image has a tag of its own and never gets 304")
    func changingNeverNotModified() async throws {
        try await withGallery(faults: GalleryFaults(imageFaults: [3: .changing])) { _, baseURL in
            let feed = try await RawHTTP.get(baseURL, "/gallery/images")
            let feedTag = try #require(feed.headers["etag"])
            #expect(feed.headers["last-modified"] == nil)
            let again = try await RawHTTP.get(baseURL, "/gallery/images", headers: [("If-None-Match", feedTag)])
            #expect(again.status == 200)
            #expect(again.headers["etag"] != feedTag)

            let image = try await RawHTTP.get(baseURL, "/gallery/image?3")
            let imageTag = try #require(image.headers["etag"])
            let next = try await RawHTTP.get(baseURL, "/gallery/image?3", headers: [("If-None-Match", imageTag)])
            #expect(next.status == 200)
            #expect(next.body != image.body)
            #expect(next.headers["etag"] != imageTag)
        }
    }

    @Test("an image's tag is that of its bytes: 304 while they stay, 200 with a new tag when a generation or corruption changes them")
    func imageTagFollowsBytes() async throws {
        let records = RecordList()
        try await withGallery(requestLogger: { records.append($0) }) { server, baseURL in
            let first = try await RawHTTP.get(baseURL, "/gallery/image?3")
            #expect(first.body == server.imageBytes(3))
            let etag = try #require(first.headers["etag"])
            let lastModified = try #require(first.headers["last-modified"])
            #expect(!etag.hasPrefix("W/"))

            let cached = try await RawHTTP.get(baseURL, "/gallery/image?3", headers: [("If-None-Match", etag)])
            #expect(cached.status == 304)
            #expect(cached.body.isEmpty)
            try #require(await eventually(timeout: .seconds(10)) { records.all.contains { $0.path == "/gallery/image?3" && $0.status == 304 && $0.bytes == 0 } })
            let byDate = try await RawHTTP.get(baseURL, "/gallery/image?3", headers: [("If-Modified-Since", lastModified)])
            #expect(byDate.status == 304)
            // Another image has another tag.
            #expect(try await RawHTTP.get(baseURL, "/gallery/image?4").headers["etag"] != etag)

            server.setFaults(GalleryFaults(generation: 1))
            let regenerated = try await RawHTTP.get(baseURL, "/gallery/image?3", headers: [("If-None-Match", etag)])
            #expect(regenerated.status == 200)
            #expect(regenerated.body == server.imageBytes(3))
            #expect(regenerated.headers["etag"] != etag)
            let staleDate = try await RawHTTP.get(baseURL, "/gallery/image?3", headers: [("If-Modified-Since", lastModified)])
            #expect(staleDate.status == 200)

            server.setFaults(GalleryFaults(imageFaults: [3: .corrupt]))
            let corrupt = try await RawHTTP.get(baseURL, "/gallery/image?3")
            #expect(corrupt.body != server.imageBytes(3))
            #expect(corrupt.headers["etag"] != etag && corrupt.headers["etag"] != regenerated.headers["etag"])
        }
    }

    @Test("the error item has validators too; transport faults send none and never answer 304")
    func errorItemsAndTransportFaults() async throws {
        try await withGallery(faults: GalleryFaults(imageFaults: [4: .truncated, 5: .serverError])) { _, baseURL in
            let missing = try await RawHTTP.get(baseURL, "/gallery/image?10")
            let tag = try #require(missing.headers["etag"])
            let again = try await RawHTTP.get(baseURL, "/gallery/image?10", headers: [("If-None-Match", tag)])
            #expect(again.status == 304)

            let truncated = try await RawHTTP.get(baseURL, "/gallery/image?4", headers: [("If-None-Match", "*")])
            #expect(truncated.status == 200)
            #expect(truncated.headers["etag"] == nil)
            let failed = try await RawHTTP.get(baseURL, "/gallery/image?5", headers: [("If-None-Match", "*")])
            #expect(failed.status == 500)
            #expect(failed.headers["etag"] == nil)
        }
    }
}

/// Every request record the gallery logged, for tests that look for one.
final class RecordList: Sendable {
    private let storage = Mutex<[GalleryRequestRecord]>([])
    func append(_ record: GalleryRequestRecord) { storage.withLock { $0.append(record) } }
    var all: [GalleryRequestRecord] { storage.withLock { $0 } }
}
