import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

/// A repair's `event=repair` line belongs to the load that repairs: one damage reported twice (a watcher check
/// that finished after another repair of the same file, or two checks at once) is one repair line, one request,
/// and a `hit=network` line after it. Before, the keeper logged the repair line before asking for the load, so a
/// second report that joined the first one's load left a repair line after the last `hit=network` line.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct RepairLineTests {
    @Test func oneDamageReportedTwiceIsOneRepair() async throws {
        let gallery = try await GalleryFixture(count: 4)
        let dir = TemporaryDirectory("repair-lines")
        let agent = try await SyncAgent(configuration: gallery.configuration(dir: dir.path))
        _ = try await agent.syncOnce()
        let n = try #require(gallery.validNumbers.first)
        let key = try AssetKey(feedURL: "/gallery/image?\(n)")
        let requests = gallery.server.imageRequestCount
        let networkBefore = lines("hit=network").count  // the first sync's
        func lines(_ event: String) -> [String] {
            logLines(dir.path).filter { $0.contains("key=/gallery/image?\(n) ") || $0.hasSuffix("key=/gallery/image?\(n)") }
                .filter { $0.contains(event) }
        }

        // Two reports at once: the second joins the first one's load.
        unlink(dir.file(AssetFileName.name(for: key)))
        try await Self.repairTwiceAtOnce(key, in: agent.core.pipeline)
        #expect(gallery.isMirrored(n, in: dir))
        #expect(lines("event=repair").count == 1, "\(lines("event=repair"))")
        #expect(lines("hit=network").count == networkBefore + 1)
        #expect(gallery.server.imageRequestCount == requests + 1)

        // A report of damage that was repaired since: the file is found intact, nothing is fetched or logged as
        // a repair.
        _ = try await agent.core.pipeline.refetch(key, reason: .missing)
        #expect(lines("event=repair").count == 1, "\(lines("event=repair"))")
        #expect(gallery.server.imageRequestCount == requests + 1)

        let all = logLines(dir.path)
        let repair = try #require(all.lastIndex { $0.contains("event=repair") && $0.contains("key=/gallery/image?\(n)") })
        let network = try #require(all.lastIndex { $0.contains("hit=network") && $0.contains("key=/gallery/image?\(n)") })
        #expect(repair < network)
        agent.shutdown()
        await gallery.stop()
    }

    @SyncActor
    private static func repairTwiceAtOnce(_ key: AssetKey, in pipeline: AccessPipeline) async throws {
        async let first = pipeline.refetch(key, reason: .missing)
        async let second = pipeline.refetch(key, reason: .missing)
        _ = try await (first, second)
    }
}
