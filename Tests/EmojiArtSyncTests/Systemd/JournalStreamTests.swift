@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Log lines on stderr when stderr is the journal: the agent binary with stderr on a real file, and
/// `JOURNAL_STREAM` naming that file's device and inode as systemd would.
@Suite(.timeLimit(.minutes(3)))
struct JournalStreamTests {
    /// `DEVICE:INODE` of a file, as systemd writes it into `JOURNAL_STREAM`.
    private func deviceAndInode(_ path: String) throws -> String {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        guard let device = attributes[.systemNumber], let inode = attributes[.systemFileNumber] else {
            throw TestFailure("no device or inode number for \(path)")
        }
        return "\(device):\(inode)"
    }

    private func runOnce(gallery: GalleryFixture, dir: TemporaryDirectory, stderrPath: String, journalStream: String) async throws -> Int32? {
        let child = try AgentProcess(
            ["--dir", dir.path, "--server", gallery.baseURL, "--once", "--retries", "0"],
            outputDirectory: dir.path, environment: ["JOURNAL_STREAM": journalStream], stderrPath: stderrPath)
        return await child.waitForExit(timeout: .seconds(60))
    }

    @Test func onTheJournalStderrLinesCarryPrioritiesAndNoTimestampAndNoAccessLinesWhileTheFileKeepsThem() async throws {
        let gallery = try await GalleryFixture(count: 12)
        let dir = TemporaryDirectory("journal")
        let output = TemporaryDirectory("journal-stderr")
        let stderrPath = output.file("stderr")
        #expect(FileManager.default.createFile(atPath: stderrPath, contents: nil))

        let status = try await runOnce(gallery: gallery, dir: dir, stderrPath: stderrPath, journalStream: try deviceAndInode(stderrPath))
        #expect(status == 2, "items 10 (and out-of-range ones) are JSON errors: a partial sync")

        let stderrLines = (try String(contentsOfFile: stderrPath, encoding: .utf8)).split(separator: "\n")
            .filter { !$0.hasPrefix("emojiart-sync:") && !$0.hasPrefix("  ") }  // the --once summary, not log lines
        #expect(!stderrLines.isEmpty)
        for line in stderrLines {
            #expect(line.wholeMatch(of: /<[2-7]>level=[a-z]+ .*/) != nil, "not a journal line: \(line)")
            #expect(!line.contains(" ts="), "the journal stamps lines itself: \(line)")
        }
        #expect(stderrLines.contains { $0.hasPrefix("<6>level=info ") && $0.contains("event=pass") })
        #expect(stderrLines.contains { $0.hasPrefix("<4>level=warning ") && $0.contains("result=failed") })
        #expect(!stderrLines.contains { $0.contains(" hit=") }, "access lines stay in the log file")
        let file = logLines(dir.path)
        #expect(file.allSatisfy { $0.hasPrefix("ts=") }, "the log file keeps its timestamps")
        #expect(file.contains { $0.contains(" event=asset ") && $0.contains(" hit=network ") })
        let events = file.filter { !$0.contains(" hit=") }
        #expect(events.map { $0.drop { $0 != " " }.dropFirst() } == stderrLines.map { $0.dropFirst(3) }, "the rest, the same")
        await gallery.stop()
    }

    @Test func anInheritedJournalStreamThatIsNotStderrChangesNothing() async throws {
        let gallery = try await GalleryFixture(count: 3)
        let dir = TemporaryDirectory("journal-not")
        let output = TemporaryDirectory("journal-not-stderr")
        let stderrPath = output.file("stderr")
        let elsewhere = output.file("elsewhere")
        #expect(FileManager.default.createFile(atPath: stderrPath, contents: nil))
        #expect(FileManager.default.createFile(atPath: elsewhere, contents: nil))

        let status = try await runOnce(gallery: gallery, dir: dir, stderrPath: stderrPath, journalStream: try deviceAndInode(elsewhere))
        #expect(status == 0)
        let lines = (try String(contentsOfFile: stderrPath, encoding: .utf8)).split(separator: "\n")
        #expect(!lines.isEmpty)
        #expect(lines.allSatisfy { $0.hasPrefix("ts=") })
        await gallery.stop()
    }
}
