import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

/// The numbers `status`, systemd's STATUS= and the `emojiart_sync_assets` gauge show: each asset of the feed in
/// exactly one state, and the failures named, once per pass in the log.
@Suite(.timeLimit(.minutes(2)))
struct AssetStateTests {
    @Test func theStatesPartitionTheFeedAndTheLastErrorNamesAFailingAsset() async throws {
        let gallery = try await GalleryFixture()  // 29 items; 10 and 20 answer with a JSON error
        let dir = TemporaryDirectory("states")
        let agent = try await gallery.startAgent(dir: dir)
        let base = AgentStatus(pid: 0, startedAt: Date(), directory: dir.path, server: gallery.baseURL)
        let settled = await eventually {
            let status = await agent.keeper.status(base: base)
            return status.assets.failing == gallery.errorNumbers.count && status.assets.ok == gallery.validNumbers.count
        }
        let status = await agent.keeper.status(base: base)
        #expect(await agent.stop() == .success)
        await gallery.stop()
        #expect(settled)
        #expect(status.assets.total == 29)
        #expect(status.assets.ok == gallery.validNumbers.count)
        #expect(status.assets.failing == gallery.errorNumbers.count)
        #expect(status.assets.missing == 0, "failing assets were counted as missing too")
        #expect(status.assets.ok + status.assets.missing + status.assets.failing == status.assets.total)
        let lastError = try #require(status.lastError, "two assets fail, yet the status shows no error")
        #expect(gallery.errorNumbers.contains { lastError.contains("/gallery/image?\($0)") })
    }

    /// Before: a memory purge (`purge memory`, `m` in `status --watch`) forgot the failures with the cache, so the
    /// failing assets showed as missing, still after the next poll: an alert on failing > 0 cleared with nothing fixed.
    @Test func aMemoryPurgeChangesNoAssetsState() async throws {
        let gallery = try await GalleryFixture(count: 12, imageSize: .small)  // item 10 answers with a JSON error
        let dir = TemporaryDirectory("purge-states")
        let agent = try await gallery.startAgent(dir: dir)
        let base = AgentStatus(pid: 0, startedAt: Date(), directory: dir.path, server: gallery.baseURL)
        func states() async -> AgentStatus.Assets { await agent.keeper.status(base: base).assets }
        var expected = AgentStatus.Assets()
        (expected.total, expected.ok, expected.failing) = (12, gallery.validNumbers.count, 1)
        #expect(await eventually { await states() == expected })

        _ = await agent.keeper.purgeMemory()
        #expect(await states() == expected, "right after the purge")
        func polls() -> Int { logLines(dir.path).filter { $0.contains("event=poll") }.count }
        let before = polls()
        await agent.keeper.pollNow(fullPass: true)  // every entry accessed again: disk hits, the failure on record
        #expect(await eventually { polls() > before })
        #expect(await states() == expected, "after the next poll")
        #expect(await agent.stop() == .success)
        await gallery.stop()
    }

    @Test func aFailingAssetIsLoggedOncePerPassHoweverOftenTheFeedListsIt() async throws {
        let gallery = try await GalleryFixture()  // every item listed three times
        let dir = TemporaryDirectory("one-line")
        let report = try await gallery.syncOnce(dir: dir.path)
        await gallery.stop()
        #expect(report.failures.count == gallery.errorNumbers.count)
        let lines = logLines(dir.path)
        for n in gallery.errorNumbers {
            let failed = lines.filter {
                $0.contains("event=asset") && $0.contains("result=failed")
                    && $0.split(separator: " ").contains("key=/gallery/image?\(n)")
            }
            #expect(failed.count == 1, "image \(n) failed with \(failed.count) lines in one pass")
        }
    }
}
