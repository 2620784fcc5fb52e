@testable import EmojiArtGallery
import Foundation
import Testing

@Suite("GET /gallery/image?N: PNGs with the book's headers, and the book's error quirk", .timeLimit(.minutes(1)))
struct ImageTests {
    @Test("an image is a 360x650 PNG that libpng decodes, sent with the book's lying headers")
    func pngWithHeaders() async throws {
        try await withGallery { server, baseURL in
            let response = try await fetch(baseURL, "/gallery/image?3")
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "application/octet-stream")
            #expect(response.headers["content-disposition"] == #"filename="3.tiff""#)
            #expect(response.headers["content-length"] == String(response.body.count))
            #expect(response.body.starts(with: PNGInspection.signature))

            let dimensions = try PNGInspection.dimensions(response.body)
            #expect(dimensions.width == 360 && dimensions.height == 650)
            let chunks = try PNGInspection.chunks(response.body)
            #expect(chunks.allSatisfy { $0.crcMatches })
            #expect(chunks.last?.type == "IEND")
            let decoded = try PNGInspection.decodeRGBA(response.body)
            #expect(decoded.width == 360 && decoded.height == 650)
            // Opaque everywhere.
            #expect(stride(from: 3, to: decoded.pixels.count, by: 4).allSatisfy { decoded.pixels[$0] == 255 })

            #expect(response.body == server.imageBytes(3))
        }
    }

    @Test(
        "N % 10 == 0, N out of range and a query that is not a number answer 200 with the error JSON",
        arguments: ["10", "20", "0", "30", "1000", "-1", "abc", "", "key=3", "3.0"]
    )
    func errorItems(query: String) async throws {
        try await withGallery { server, baseURL in
            let response = try await fetch(baseURL, "/gallery/image?\(query)")
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "application/json")
            #expect(response.text == #"{"error": "File not found."}"#)
            if let n = Int(query) {
                #expect(GalleryServer.isErrorItem(n, count: 29))
                #expect(server.imageBytes(n) == response.body)
            }
        }
    }

    @Test("isErrorItem follows the book: multiples of 10 and anything outside 1...count")
    func isErrorItem() {
        #expect(GalleryServer.isErrorItem(10, count: 29))
        #expect(GalleryServer.isErrorItem(0, count: 29))
        #expect(GalleryServer.isErrorItem(30, count: 29))
        #expect(GalleryServer.isErrorItem(-3, count: 29))
        #expect(!GalleryServer.isErrorItem(1, count: 29))
        #expect(!GalleryServer.isErrorItem(29, count: 29))
        #expect(GalleryServer.isErrorItem(29, count: 28))
    }

    @Test("the same N gives the same bytes on two servers; imageBytes is what is served")
    func deterministicAcrossServers() async throws {
        let first = try await withGallery { _, baseURL in
            [try await fetch(baseURL, "/gallery/image?1").body, try await fetch(baseURL, "/gallery/image?7").body]
        }
        let second = try await withGallery { server, baseURL in
            #expect(server.imageBytes(7) == first[1])
            return [try await fetch(baseURL, "/gallery/image?1").body, try await fetch(baseURL, "/gallery/image?7").body]
        }
        #expect(first == second)
        #expect(first[0] != first[1])
    }

    @Test("different N give visibly different pictures, not just different bytes")
    func visiblyDifferent() async throws {
        try await withGallery { server, _ in
            let one = try PNGInspection.decodeRGBA(server.imageBytes(1)).pixels
            let two = try PNGInspection.decodeRGBA(server.imageBytes(2)).pixels
            var clearlyDifferent = 0
            for pixel in stride(from: 0, to: one.count, by: 4) {
                let distance = (0..<3).map { abs(Int(one[pixel + $0]) - Int(two[pixel + $0])) }.reduce(0, +)
                if distance > 60 { clearlyDifferent += 1 }
            }
            // Different background pair, motif and number: most of the picture changes.
            #expect(clearlyDifferent > 360 * 650 / 2)
        }
    }

    @Test("every image is 20-80 KB, so the agent's benchmarks see realistic sizes")
    func realisticSizes() async throws {
        try await withGallery(count: 1000) { server, _ in
            for n in Array(1...29) + [111, 999] where !GalleryServer.isErrorItem(n, count: 1000) {
                let size = server.imageBytes(n).count
                #expect((20_000...80_000).contains(size), "image \(n) is \(size) bytes")
            }
        }
    }

    @Test("a generation bump changes every image's bytes; the pictures stay valid PNGs")
    func generationBump() async throws {
        try await withGallery { server, baseURL in
            let before = try await fetch(baseURL, "/gallery/image?4").body
            server.setFaults(GalleryFaults(generation: 1))
            let after = try await fetch(baseURL, "/gallery/image?4").body
            #expect(before != after)
            #expect(after == server.imageBytes(4))
            #expect(try PNGInspection.decodeRGBA(after).width == 360)
            server.setFaults(GalleryFaults(generation: 0))
            #expect(try await fetch(baseURL, "/gallery/image?4").body == before)
        }
    }

    @Test("small: distinct 16x16 PNGs, the export's bytes at generation 0; a generation or the changing fault changes them")
    func smallImages() async throws {
        let export = GalleryExport(count: 29, small: true)
        try await withGallery(faults: GalleryFaults(imageFaults: [7: .changing]), imageSize: .small) { server, baseURL in
            let three = try await fetch(baseURL, "/gallery/image?3").body
            #expect(three == server.imageBytes(3))
            #expect(three == (try export.imageBytes(3)))
            #expect(three.count < 200)
            let decoded = try PNGInspection.decodeRGBA(three)
            #expect(decoded.width == 16 && decoded.height == 16)
            #expect(three != server.imageBytes(4))

            let first = try await fetch(baseURL, "/gallery/image?7").body
            let second = try await fetch(baseURL, "/gallery/image?7").body
            #expect(first != second)
            #expect(try PNGInspection.decodeRGBA(second).width == 16)

            server.setFaults(GalleryFaults(generation: 1))
            let bumped = try await fetch(baseURL, "/gallery/image?3").body
            #expect(bumped != three)
            #expect(bumped == server.imageBytes(3))
            #expect(try PNGInspection.decodeRGBA(bumped).height == 16)
        }
    }

    @Test("unknown paths answer 404; wrong methods on the book's paths answer 405")
    func unknownPaths() async throws {
        try await withGallery { _, baseURL in
            let root = try await fetch(baseURL, "/")
            #expect(root.status == 404)
            #expect(try await fetch(baseURL, "/gallery").status == 404)
            #expect(try await fetch(baseURL, "/gallery/images/extra").status == 404)
            #expect(try await fetch(baseURL, "/gallery/image/3").status == 404)
            #expect(try await fetch(baseURL, "/_control/nothing").status == 404)
            #expect(try await fetch(baseURL, "/gallery/images", method: "POST", body: []).status == 405)
        }
    }

    @Test("a large count starts at once: images are made on first request, not up front")
    func lazyImages() async throws {
        // Painting 10,000 images takes many minutes, beyond the suite's time limit; starting paints none.
        try await withGallery(count: 10_000) { server, baseURL in
            #expect(server.paintedImageCount == 0)
            let response = try await fetch(baseURL, "/gallery/image?9999")
            let dimensions = try PNGInspection.dimensions(response.body)
            #expect(dimensions.width == 360 && dimensions.height == 650)
            #expect(server.paintedImageCount == 1, "only the image asked for")
        }
    }
}
