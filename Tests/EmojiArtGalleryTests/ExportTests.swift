import EmojiArtGallery
import Foundation
import TestSupport
import Testing

@Suite("emojiart-gallery export: the gallery as static files", .timeLimit(.minutes(1)))
struct ExportTests {
    @Test("writes the feed (each item three times, static urls) and every image; error items hold the book's JSON")
    func fullSizeExport() async throws {
        let directory = TemporaryDirectory("export")
        let out = directory.path
        let outcome = try await ChildProcess.run(executable: try galleryExecutablePath(), ["export", "--dir", out, "--count", "12"])
        #expect(outcome.exited && outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("event=exported"))

        let feed = try JSONDecoder().decode([GalleryItem].self, from: Data(contentsOf: URL(fileURLWithPath: out + "/gallery/images")))
        #expect(feed.count == 36)
        #expect(Set(feed.map(\.url)) == Set((1...12).map { "/gallery/image/\($0).png" }))
        for item in feed {
            #expect(feed.filter { $0 == item }.count == 3)
        }
        let server = GalleryServer(configuration: GalleryConfiguration(count: 12))
        for n in 1...12 {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(out)/gallery/image/\(n).png")))
            // Images are deterministic per N, so the server's bytes are the exported ones.
            #expect(bytes == server.imageBytes(n), "image \(n)")
        }
        #expect(!FileManager.default.fileExists(atPath: out + "/gallery/image/13.png"))
        #expect(try String(contentsOfFile: out + "/gallery/image/10.png", encoding: .utf8) == #"{"error": "File not found."}"#)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out + "/gallery/image").allSatisfy { !$0.hasSuffix(".tmp") })
    }

    @Test("--small makes distinct 16x16 PNGs of about 125 bytes; --base-url prefixes the feed's urls")
    func smallExport() async throws {
        let directory = TemporaryDirectory("export")
        let out = directory.path
        let export = GalleryExport(count: 300, small: true, baseURL: "/static/")
        #expect(try await export.write(to: out) == 301)

        var seen = Set<[UInt8]>()
        for n in 1...300 where n % 10 != 0 {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(out)/gallery/image/\(n).png")))
            #expect(bytes.count < 150, "image \(n) is \(bytes.count) bytes")
            let decoded = try PNGInspection.decodeRGBA(bytes)
            #expect(decoded.width == 16 && decoded.height == 16)
            seen.insert(bytes)
        }
        #expect(seen.count == 270)
        let feed = try JSONDecoder().decode([GalleryItem].self, from: Data(contentsOf: URL(fileURLWithPath: out + "/gallery/images")))
        #expect(feed.count == 900)
        #expect(feed.allSatisfy { $0.url.hasPrefix("/static/gallery/image/") && $0.url.hasSuffix(".png") })
    }
}
