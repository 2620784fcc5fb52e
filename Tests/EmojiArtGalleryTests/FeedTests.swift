import EmojiArtGallery
import Foundation
import Testing

@Suite("GET /gallery/images: the book's feed, duplicates and shuffle included", .timeLimit(.minutes(1)))
struct FeedTests {
    @Test("lists every item exactly three times, as JSON with the four wire fields")
    func tripledItems() async throws {
        try await withGallery { server, baseURL in
            let response = try await fetch(baseURL, "/gallery/images")
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "application/json")
            let items = try JSONDecoder().decode([GalleryItem].self, from: Data(response.body))
            #expect(items.count == 3 * 29)

            var occurrences: [String: Int] = [:]
            for item in items { occurrences[item.url, default: 0] += 1 }
            #expect(occurrences.count == 29)
            #expect(occurrences.values.allSatisfy { $0 == 3 })
            #expect(Set(occurrences.keys) == Set((1...29).map { "/gallery/image?\($0)" }))
            // The three copies are identical, and equal to the server's own list.
            #expect(Set(items) == Set(server.uniqueItems))

            // The raw JSON uses exactly the book's keys.
            let raw = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [[String: Any]])
            #expect(raw.allSatisfy { Set($0.keys) == ["name", "url", "price", "checksum"] })
            // Urls are written as the book's server writes them, without escaped slashes.
            #expect(response.text.contains(#""url":"/gallery/image?1""#))
        }
    }

    @Test("the order is shuffled afresh for each request")
    func shuffledPerRequest() async throws {
        try await withGallery { _, baseURL in
            let first = try JSONDecoder().decode([GalleryItem].self, from: Data(try await fetch(baseURL, "/gallery/images").body))
            let second = try JSONDecoder().decode([GalleryItem].self, from: Data(try await fetch(baseURL, "/gallery/images").body))
            #expect(first.map(\.url) != second.map(\.url))
            // Not just rotated or reversed from the unshuffled order either.
            let sorted = first.sorted { $0.url < $1.url }
            #expect(first != sorted)
            #expect(Set(first) == Set(second))
        }
    }

    @Test("checksums are UUIDs, one per item, stable for the server's lifetime but not across servers")
    func checksums() async throws {
        let firstServerItems = try await withGallery { server, baseURL in
            let one = try JSONDecoder().decode([GalleryItem].self, from: Data(try await fetch(baseURL, "/gallery/images").body))
            let two = try JSONDecoder().decode([GalleryItem].self, from: Data(try await fetch(baseURL, "/gallery/images").body))
            var checksumByURL: [String: String] = [:]
            for item in one + two {
                if let seen = checksumByURL[item.url] {
                    #expect(seen == item.checksum, "checksum of \(item.url) changed between copies or requests")
                }
                checksumByURL[item.url] = item.checksum
            }
            #expect(Set(checksumByURL.values).count == 29)
            #expect(checksumByURL.values.allSatisfy { UUID(uuidString: $0) != nil })
            // A generation bump changes bytes, not checksums (they are opaque tags).
            server.setFaults(GalleryFaults(generation: 1))
            let three = try JSONDecoder().decode([GalleryItem].self, from: Data(try await fetch(baseURL, "/gallery/images").body))
            #expect(three.allSatisfy { checksumByURL[$0.url] == $0.checksum })
            return server.uniqueItems
        }
        let secondServerItems = try await withGallery { server, _ in server.uniqueItems }
        #expect(firstServerItems.map(\.name) == secondServerItems.map(\.name))
        #expect(firstServerItems.map(\.price) == secondServerItems.map(\.price))
        #expect(firstServerItems.map(\.checksum) != secondServerItems.map(\.checksum))
    }

    @Test("names and prices are deterministic per N; uniqueItems is N = 1...count in order")
    func uniqueItems() async throws {
        try await withGallery(count: 12) { server, baseURL in
            let items = server.uniqueItems
            #expect(items.map(\.url) == (1...12).map { "/gallery/image?\($0)" })
            #expect(items.enumerated().allSatisfy { $1.name.hasSuffix(" \($0 + 1)") })
            #expect(items.allSatisfy { $0.price >= 1 && $0.price < 100 })
            #expect(Set(items.map(\.price)).count > 6, "prices should vary between items")
            let feed = try JSONDecoder().decode([GalleryItem].self, from: Data(try await fetch(baseURL, "/gallery/images").body))
            #expect(feed.count == 36)
        }
    }

    @Test("error items (N % 10 == 0) are still listed in the feed")
    func errorItemsListed() async throws {
        try await withGallery(count: 25) { _, baseURL in
            let feed = try JSONDecoder().decode([GalleryItem].self, from: Data(try await fetch(baseURL, "/gallery/images").body))
            #expect(feed.filter { $0.url == "/gallery/image?10" }.count == 3)
            #expect(feed.filter { $0.url == "/gallery/image?20" }.count == 3)
        }
    }

    @Test("emptyFeed answers [] and feedStatus answers that status")
    func feedFaults() async throws {
        try await withGallery(faults: GalleryFaults(emptyFeed: true)) { server, baseURL in
            let empty = try await fetch(baseURL, "/gallery/images")
            #expect(empty.status == 200)
            #expect(empty.text == "[]")

            server.setFaults(GalleryFaults(feedStatus: 503))
            let failing = try await fetch(baseURL, "/gallery/images")
            #expect(failing.status == 503)
            #expect(failing.headers["content-type"] == "application/json")

            server.setFaults(.none)
            let normal = try await fetch(baseURL, "/gallery/images")
            #expect(try JSONDecoder().decode([GalleryItem].self, from: Data(normal.body)).count == 87)
        }
    }
}
