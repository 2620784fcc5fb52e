import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

/// The log writer is stuck (the log file is a FIFO nobody reads) and its buffer full: the silo's own event lines
/// (the feed read, the pass's summary) are dropped and counted at once, as its access lines are. A silo line that
/// waited for room would park the `SyncActor`'s thread for a second, and every access, repair and commit with it.
@Suite(.timeLimit(.minutes(2)))
struct StuckLogTests {
    @Test func aStuckLogNeverMakesTheSiloWaitForItsEventLines() async throws {
        let gallery = try await GalleryFixture(count: 9)
        let dir = TemporaryDirectory("stuck-log")
        let logs = TemporaryDirectory("stuck-log-fifo")
        let fifo = UnreadLogFIFO(logs)
        var configuration = try gallery.configuration(dir: dir.path)
        configuration.logging.file = fifo.path
        let agent = try await SyncAgent(configuration: configuration)

        // Fill the buffer without waiting, until the writer, blocked on the full pipe, leaves no room.
        var filled = 0
        while agent.logSink.write(line: "filler \(filled)", whenFull: .drop, journalLine: { "" }) {
            filled += 1
            try #require(filled < 1_000_000, "the buffer never filled: the writer is not stuck")
        }
        let report = try await agent.syncOnce()
        #expect(agent.logSink.waitsForRoom == 0, "a line of the silo waited for the stuck writer")
        #expect(report.available == gallery.validNumbers.count, "\(report)")
        for n in gallery.validNumbers {
            #expect(gallery.isMirrored(n, in: dir), "image \(n)")
        }

        // The agent keeps the file open: the line written after the writer stopped ends the reading.
        let text = await fifo.readToEnd(through: "the end") {
            agent.shutdown()
            agent.logSink.write(line: "the end")
        }
        #expect(!text.contains { $0.contains("event=pass") }, "the summary found room in a full buffer")
        #expect(UnreadLogFIFO.droppedCount(in: text) > 0, "the dropped lines were not counted")
        await gallery.stop()
    }

    /// The log is a FIFO whose reader goes away while a `--once` run writes to it (the `tee` or logger it was piped
    /// to died): the agent's writes fail with `EPIPE` and the run goes on to its end, as under systemd
    /// (`IgnoreSIGPIPE=yes`). The first write after the reader left killed it with SIGPIPE before.
    @Test func aLogWhoseReaderWentAwayDoesNotEndTheRun() async throws {
        let gallery = try await GalleryFixture(count: 9, faults: OnceSignalTests.slow)
        let out = TemporaryDirectory("log-epipe-out")
        let dir = TemporaryDirectory("log-epipe")
        let logs = TemporaryDirectory("log-epipe-fifo")
        let fifo = UnreadLogFIFO(logs)
        let run = try AgentProcess(
            ["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q", "--concurrency", "1", "--log-file", fifo.path],
            outputDirectory: out.path)
        defer { run.signal(SIGKILL) }
        #expect(await eventually { gallery.server.imageRequestCount >= 1 }, "the run never began: \(run.stderr)")
        _ = consume fifo  // the reader goes away with 8 of the 9 images still to come, and their lines

        let status = await run.waitForExit(timeout: .seconds(60))
        #expect(run.exited && status == 0, "status \(String(describing: status)), \(run.exited ? "exited" : "killed"): \(run.stderr)")
        #expect(gallery.validNumbers.allSatisfy { gallery.isMirrored($0, in: dir) })
        await gallery.stop()
    }
}
