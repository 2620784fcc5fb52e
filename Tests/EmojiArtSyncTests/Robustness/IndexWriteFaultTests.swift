import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

/// A file renamed into place whose row cannot be written (the index on a full disk): the agent must not leave
/// it behind without a row, where it would look like the user's file from then on. The test-only switch
/// `EMOJIART_SYNC_TEST_FAULT=index-write-full` makes every row write fail that way, after the file's rename.
@Suite(.timeLimit(.minutes(2)))
struct IndexWriteFaultTests {
    @Test func aFileWhoseRowCannotBeWrittenIsTakenBackAndFetchedLaterEvenIfItChanged() async throws {
        let gallery = try await GalleryFixture(count: 9)
        let out = TemporaryDirectory("index-full-out")
        let dir = TemporaryDirectory("index-full")
        let run = try await AgentProcess.run(
            ["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q"], outputDirectory: out.path,
            environment: ["EMOJIART_SYNC_TEST_FAULT": "index-write-full"])
        #expect(run.status == ExitStatus.partial.rawValue, "\(run.stderr)")
        #expect(run.stderr.contains("disk is full"), "\(run.stderr)")
        #expect(dir.names().filter { $0.hasSuffix(".png") }.isEmpty, "files without rows were left in DIR")
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)

        // The server's images change before the next run: every file is fetched and owned, none refused.
        gallery.server.setFaults(GalleryFaults(generation: 1))
        let report = try await gallery.syncOnce(dir: dir.path)
        await gallery.stop()
        #expect(report.isComplete, "\(report.failures)")
        for n in gallery.validNumbers {
            #expect(gallery.isMirrored(n, in: dir), "image \(n)")
        }
        #expect(!logLines(dir.path).contains { $0.contains("event=conflict") })
    }
}
