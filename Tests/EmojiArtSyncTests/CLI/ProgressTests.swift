@testable import EmojiArtSync
@testable import emojiart_sync
import Foundation
import TestSupport
import Testing

/// The progress line of `--once`: its text on real values, and what a real run draws on a terminal.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ProgressTests {
    @Test func theLineSaysDoneOfTotalBytesRateAndTimeLeft() {
        let line = ProgressFormat.line(SyncProgress(done: 42, total: 120, bytes: 3 * 1024 * 1024), elapsed: .seconds(2))
        #expect(line == " 42/120 assets  35%  3.0 MiB  1.5 MiB/s  ETA 3.7s")
        #expect(ProgressFormat.line(SyncProgress(done: 0, total: 9, bytes: 0), elapsed: .milliseconds(5)) == "0/9 assets  0%  0 B  0 B/s  ETA --")
        #expect(ProgressFormat.line(SyncProgress(done: 9, total: 9, bytes: 9000), elapsed: .seconds(3)) == "9/9 assets  100%  8.8 KiB  2.9 KiB/s  ETA 0s")
        #expect(ProgressFormat.line(SyncProgress(done: 1, total: 1000, bytes: 512), elapsed: .seconds(1)).hasSuffix("ETA 16m39s"))
        #expect(ProgressFormat.duration(7322) == "2h02m")
        #expect(ProgressFormat.line(SyncProgress(done: 12, total: 12, bytes: 9000, failed: 2), elapsed: .seconds(3))
            == "12/12 assets  100%  8.8 KiB  2.9 KiB/s  ETA 0s  2 failed")
    }

    @Test func theSummarySaysWhereAssetsCameFromAndWhatFailed() throws {
        var report = SyncReport()
        report.uniqueAssets = 29
        report.available = 26
        report.hits = [.network: 20, .disk: 6]
        report.bytesFetched = 1_500_000
        report.duration = .milliseconds(1300)
        report.failures = try [10, 20, 30].map { SyncReport.Failure(key: try AssetKey(feedURL: "/gallery/image?\($0)"), cause: .failed) }
        #expect(ProgressFormat.summary(report) == "synced 26 of 29 assets in 1.3s: 20 network, 6 disk, 0 memory; 1.4 MiB fetched, 3 failed")
    }

    @Test func aOnceRunOnATerminalDrawsProgressAndASummaryInsteadOfLogLines() async throws {
        let gallery = try await GalleryFixture(count: 9)
        let dir = TemporaryDirectory("progress-tty")
        let out = TemporaryDirectory("progress-out")
        let run = try await Self.onceOnATerminal(gallery, dir: dir, out: out)
        #expect(run.status == 0, "\(run.terminal)")
        #expect(run.terminal.contains("\r0/9 assets  0%"), "\(run.terminal)")
        #expect(run.terminal.contains("\r9/9 assets  100%"), "\(run.terminal)")
        #expect(run.terminal.contains("synced 9 of 9 assets in "), "\(run.terminal)")
        #expect(run.terminal.contains("9 network"), "\(run.terminal)")
        #expect(!run.terminal.contains("level=info"), "log lines go to the log file only: \(run.terminal)")
        #expect(logLines(dir.path).contains { $0.contains("hit=network") })

        let quiet = try await PseudoTerminal.run(["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q"], outputDirectory: out.path)
        #expect(quiet.status == 0)
        #expect(quiet.terminal.isEmpty, "--quiet draws nothing: \(quiet.terminal)")

        let piped = try await AgentProcess.run(["--dir", dir.path, "--server", gallery.baseURL, "--once"], outputDirectory: out.path)
        #expect(piped.status == 0)
        #expect(piped.stderr.contains("hit=memory") || piped.stderr.contains("hit=disk"), "plain log lines when not a terminal")
        #expect(!piped.stderr.contains("\r") && !piped.stderr.contains("assets  "), "\(piped.stderr)")
        await gallery.stop()
    }

    /// Item 10 of the book's gallery answers JSON, not a PNG: the line says so while the run goes, and the run
    /// ends partial (exit 2) naming it.
    @Test func aOnceRunThatCannotHaveEverythingCountsItsFailuresOnTheLine() async throws {
        let gallery = try await GalleryFixture(count: 11)
        let dir = TemporaryDirectory("progress-failed")
        let run = try await Self.onceOnATerminal(gallery, dir: dir, out: TemporaryDirectory("progress-failed-out"))
        #expect(run.status == 2, "\(run.terminal)")
        let last = try #require(run.terminal.components(separatedBy: "\r").last { $0.hasPrefix("11/11 assets  100%") })
        #expect(last.contains("ETA 0s  1 failed"), "\(run.terminal)")
        #expect(run.terminal.contains("synced 10 of 11 assets in "), "\(run.terminal)")
        await gallery.stop()
    }

    /// `emojiart-sync --once` on a pseudo-terminal against `gallery`: its exit status and what it drew.
    static func onceOnATerminal(
        _ gallery: GalleryFixture, dir: TemporaryDirectory, out: TemporaryDirectory
    ) async throws -> (status: Int32?, terminal: String) {
        try await PseudoTerminal.run(["--dir", dir.path, "--server", gallery.baseURL, "--once"], outputDirectory: out.path)
    }
}
