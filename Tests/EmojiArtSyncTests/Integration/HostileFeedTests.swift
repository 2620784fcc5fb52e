import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

/// A feed whose urls point elsewhere must never lead to a request elsewhere or a file outside DIR.
@Suite(.timeLimit(.minutes(2)))
struct HostileFeedTests {
    static let hostile = [
        "http://127.0.0.1:9/gallery/image?1", "https://evil.example/x.png", "//evil.example/x", "gallery/image?2",
        "/../../outside.png", "/gallery/../../../outside", "/gallery/image?1/../../x", "/%2e%2e/%2e%2e/outside",
        "/a\\..\\b", "file:///etc/passwd", "/x\ny", "",
    ]

    @Test func hostileURLsAreRefusedLoggedAndNeverRequested() async throws {
        let gallery = try await GalleryFixture(count: 3, faults: GalleryFaults(extraFeedURLs: Self.hostile))
        let parent = TemporaryDirectory("hostile-parent")
        let dir = parent.file("mirror")
        let report = try await gallery.syncOnce(dir: dir)
        let stats = gallery.server.stats
        await gallery.stop()

        #expect(report.rejected.count == Self.hostile.count)
        #expect(ExitStatus.of(report) == .partial, "refused items make the sync partial")
        #expect(report.available == 3)
        // Only the feed and the three real images were requested.
        #expect(Set(stats.paths.keys) == ["/gallery/images", "/gallery/image?1", "/gallery/image?2", "/gallery/image?3"])
        // Nothing appeared outside DIR, and DIR holds only the three images and the agent's state.
        #expect(parent.names() == ["mirror"])
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir)) == [
            ".emojiart-sync", "gallery_image_1.png", "gallery_image_2.png", "gallery_image_3.png",
        ])
        let rejects = logLines(dir).filter { $0.contains("event=reject") }
        #expect(rejects.count == Self.hostile.count)
        #expect(rejects.allSatisfy { !$0.dropFirst().contains("\n") })
    }
}
