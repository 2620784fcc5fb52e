import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import Logging
import TestSupport
import Testing

/// Content that changes on the server is noticed: the feed's tags say which keys changed, conditional requests
/// make an unchanged image cost a `304`, and an unchanged feed ends a poll at its `304`.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct FreshnessTests {
    @Test func aServerRestartedWithNewContentIsFollowedAndOneWithTheSameContentCostsOnly304s() async throws {
        let first = try await GalleryFixture(count: 5)
        let port = try first.port()
        let dir = TemporaryDirectory("fresh")
        _ = try await first.syncOnce(dir: dir.path)
        await first.stop()

        // The book's server makes new checksums at every start; this one also paints new bytes (generation 1).
        let changed = GalleryServer(configuration: GalleryConfiguration(
            host: "127.0.0.1", port: port, count: 5, faults: GalleryFaults(generation: 1)))
        _ = try await changed.start()
        let inodes = try (1...4).map { try inode(dir.file("gallery_image_\($0).png")) }
        let second = try await first.syncOnce(dir: dir.path)
        #expect(second.isComplete)
        for n in first.validNumbers {
            #expect(readBytes(dir.file("gallery_image_\(n).png")) == changed.imageBytes(n), "image \(n) not updated")
        }
        #expect(try (1...4).map { try inode(dir.file("gallery_image_\($0).png")) } != inodes, "replaced by rename, atomically")
        let updated = logLines(dir.path).filter { $0.contains("event=refresh") && $0.contains("result=updated") }
        #expect(updated.count == first.validNumbers.count)
        await changed.stop()

        // Restarted again with the same content: new tags, but every conditional request is answered 304.
        let same = GalleryServer(configuration: GalleryConfiguration(
            host: "127.0.0.1", port: port, count: 5, faults: GalleryFaults(generation: 1)))
        _ = try await same.start()
        let third = try await first.syncOnce(dir: dir.path)
        await same.stop()
        #expect(third.isComplete)
        #expect(third.bytesFetched == 0, "an unchanged image must not be sent again")
        let notModified = logLines(dir.path).filter { $0.contains("event=refresh") && $0.contains("result=not_modified") }
        #expect(notModified.count == first.validNumbers.count)
    }

    /// An answer that was no image stays on record "for an hour or until the feed gives it another tag" (the man
    /// page). The running agent also remembers it in memory: a restarted server, which gives every item a new
    /// tag, must get the error items asked for again at the next poll, not an hour later.
    @Test func aRunningAgentAsksAgainForAnErrorItemTheFeedGivesAnotherTag() async throws {
        let first = try await GalleryFixture(count: 20)
        let port = try first.port()
        let dir = TemporaryDirectory("retagged-error")
        let agent = try await first.startAgent(dir: dir)
        let polled = await eventually { logLines(dir.path).contains { $0.contains("event=poll") && $0.contains("result=ok") } }
        try #require(polled)
        #expect(first.errorNumbers.allSatisfy { first.server.requestCount(path: "/gallery/image?\($0)") == 1 })
        await first.stop()

        // The book's server makes new checksums at every start.
        let restarted = GalleryServer(configuration: GalleryConfiguration(host: "127.0.0.1", port: port, count: 20))
        _ = try await restarted.start()
        await agent.keeper.pollNow()
        let askedAgain = await eventually {
            first.errorNumbers.allSatisfy { restarted.requestCount(path: "/gallery/image?\($0)") >= 1 }
        }
        #expect(await agent.stop() == .success)
        await restarted.stop()
        #expect(askedAgain, "error items given a new tag were not asked for again: \(first.errorNumbers.map { restarted.requestCount(path: "/gallery/image?\($0)") })")
    }

    /// The 304 poll is routine, so it is logged at debug level (it was info: 1,440 lines a day), but the first
    /// one and then one an hour at info: a heartbeat, so that a quiet agent and a dead one differ in the log.
    @Test func anUnchangedFeedEndsThePollAtIts304() async throws {
        let gallery = try await GalleryFixture(count: 5)
        let dir = TemporaryDirectory("poll-304")
        let agent = try await gallery.startAgent(dir: dir) { $0.logging.level = .debug }
        let polled = await eventually { logLines(dir.path).contains { $0.contains("event=poll") && $0.contains("result=ok") } }
        try #require(polled)
        let images = gallery.server.imageRequestCount
        func notModifiedLines() -> [String] {
            logLines(dir.path).filter { $0.contains("event=poll") && $0.contains("result=not_modified") }
        }
        for polls in 1...3 {
            await agent.keeper.pollNow()
            #expect(await eventually { notModifiedLines().count == polls })
        }
        let lines = notModifiedLines()
        #expect(lines.first?.contains("level=info") == true, "\(lines)")
        #expect(lines.dropFirst().allSatisfy { $0.contains("level=debug") }, "\(lines)")
        #expect(lines.last?.contains("unchanged=2") == true, "\(lines)")
        #expect(gallery.server.imageRequestCount == images)
        #expect(await agent.stop() == .success)
        await gallery.stop()
    }

    private func inode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int)
    }
}
