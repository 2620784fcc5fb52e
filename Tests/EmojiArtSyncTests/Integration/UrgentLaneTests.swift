import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A person's change goes ahead of a pass: the repair of a file deleted while a full pass runs lands before that
/// pass ends. The order is made by events, so four batches show it as well as eighty (300 items listed three
/// times): the pass is held at its second batch until the watcher has seen the deletion (the lane is open), and the
/// repair's commit is held until the pass has waited for it. Before, the repair was free to finish between two
/// looks at the lane, and on a loaded machine (a fresh-clone CI run) the test never saw it open.
@Suite(.timeLimit(.minutes(5)))
struct UrgentLaneTests {
    @Test func aRepairDuringAFullPassLandsBeforeThePassEnds() async throws {
        let gallery = try await GalleryFixture(count: 300, imageSize: .small)
        let dir = TemporaryDirectory("urgent")
        let hooks = AgentTestHooks()
        let agent = try await gallery.startAgent(dir: dir) { $0.testHooks = hooks }
        let lane = agent.background.agent.core.urgentLane
        let victim = dir.file("gallery_image_123.png")
        let seen = Shared(0)
        // Batch 1 of the pass (its second): the file is deleted, and the pass goes on only once the watcher has
        // seen it.
        hooks.setBeforePassBatch { batch in
            guard batch == 1 else { return }
            unlink(victim)
            if await eventually(timeout: .seconds(10), { await lane.isOpen }) { seen.increment() }
        }
        // The repair's file is committed only once the pass has waited for the lane: the lane stays open until then.
        hooks.setBeforeCommitBatch { committing in
            guard committing == .repair else { return }
            _ = await eventually(timeout: .seconds(10)) { await lane.passesHeldBack >= 1 }
        }
        let polls = logLines(dir.path).filter { $0.contains("event=poll") }.count
        let pass = await agent.keeper.reload()
        await agent.keeper.waitForPass(pass)
        hooks.setBeforePassBatch(nil)
        hooks.setBeforeCommitBatch(nil)
        let held = await lane.passesHeldBack
        #expect(await agent.stop() == .success)
        await gallery.stop()

        // What the agent logged besides its accesses says why, if the watcher did not see it (a full suite's run
        // failed here once, and no run alone repeated it).
        #expect(seen.value == 1, "the watcher never saw the deletion during the pass; the agent logged: \(logLines(dir.path).filter { !$0.contains("hit=") }.suffix(20).joined(separator: "\n"))")
        #expect(held >= 1, "the pass never waited for the repair")
        #expect(readBytes(victim) == gallery.server.imageBytes(123))
        let lines = logLines(dir.path)
        let repaired = lines.firstIndex {
            $0.contains("hit=network") && $0.split(separator: " ").contains("key=/gallery/image?123")
        }
        let passEnds = lines.indices.filter { lines[$0].contains("event=poll") }.dropFirst(polls).first
        let repairedAt = try #require(repaired, "no hit=network line for the repaired file")
        let passEndAt = try #require(passEnds, "no poll line for the pass")
        #expect(repairedAt < passEndAt, "the repair landed after the pass ended")
    }

    /// A second deletion is checked and repaired while the repair of the first still waits: the gallery holds
    /// image requests until two are being answered at once, so both repairs end only if the second one's request
    /// is sent while the first one's is held. Before, the watcher handled one batch of events at a time and
    /// waited for its repairs: the second deletion was not even checked until the first repair ended (here, never:
    /// the first request waits for a second one, and the test's client does not give up on it).
    @Test func aSecondDeletionIsRepairedWhileTheFirstRepairStillWaits() async throws {
        let gallery = try await GalleryFixture(count: 20, imageSize: .small)
        let dir = TemporaryDirectory("second-repair")
        // No stall timeout within the test: a held request is never given up (and retried) meanwhile.
        let agent = try await gallery.startAgent(dir: dir) { $0.http.stallTimeout = .seconds(200) }
        let (first, second) = (gallery.validNumbers[0], gallery.validNumbers[1])
        let requestsBefore = gallery.server.imageRequestCount
        gallery.server.holdImageRequests(untilAnswering: 2, timeout: .seconds(100))
        unlink(dir.file("gallery_image_\(first).png"))
        try #require(await eventually(timeout: .seconds(30)) { gallery.server.imageRequestCount > requestsBefore })
        unlink(dir.file("gallery_image_\(second).png"))
        let repaired = await eventually(timeout: .seconds(30)) {
            gallery.isMirrored(first, in: dir) && gallery.isMirrored(second, in: dir)
        }
        #expect(repaired, "the second deletion waited for the first repair")
        #expect(gallery.server.peakRequestsInFlight >= 2)
        #expect(await agent.stop() == .success)
        await gallery.stop()
        let firstKey = Substring("key=/gallery/image?\(first)")
        #expect(!logLines(dir.path).contains { $0.contains("asset unavailable") && $0.split(separator: " ").contains(firstKey) })
    }
}
