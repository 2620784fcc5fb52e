import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import Logging
import TestSupport
import Testing

/// A log a person can tail at any gallery size: one line per asset and pass however often the feed lists it, one
/// `event=pass` summary per pass, a failure on record written once and then only counted.
@Suite(.timeLimit(.minutes(2)))
struct LogVolumeTests {
    /// The `event=asset` lines of `lines`, by key.
    private func assetLines(_ lines: [String]) -> [String: [String]] {
        Dictionary(grouping: lines.filter { $0.contains("event=asset") }) { line in
            line.split(separator: " ").first { $0.hasPrefix("key=") }.map(String.init) ?? ""
        }
    }

    @Test func aPassWritesOneLinePerAssetAndOneSummaryHoweverOftenTheFeedListsIt() async throws {
        let gallery = try await GalleryFixture(count: 30, imageSize: .small)
        let dir = TemporaryDirectory("log-volume")
        let report = try await gallery.syncOnce(dir: dir.path)
        await gallery.stop()
        let valid = gallery.validNumbers.count
        #expect(report.entries == 90)
        #expect(report.hits[.memory] == 2 * valid, "the repeats are still memory hits")

        let lines = logLines(dir.path)
        let byKey = assetLines(lines)
        #expect(byKey.count == 30, "one key= per asset")
        #expect(byKey.values.allSatisfy { $0.count == 1 }, "\(byKey.filter { $0.value.count > 1 })")
        #expect(!lines.contains { $0.contains("hit=memory") }, "a repeat listing writes no line")
        let passes = lines.filter { $0.contains("event=pass") }
        try #require(passes.count == 1, "\(passes)")
        let pass = passes[0]
        for field in ["network=\(valid)", "memory=\(2 * valid)", "repeats=\(2 * valid)", "disk=0",
                      "failing=\(gallery.errorNumbers.count)", "repaired=0", "assets=30", "ok=\(valid)"] {
            #expect(pass.contains(field), "\(field) in \(pass)")
        }
        #expect(pass.contains("fetched=") && pass.contains("ms="))
        // A person's message, not the validator's enum case (it said `notPNG: not a PNG: ...`).
        let failed = lines.filter { $0.contains("result=failed") }
        #expect(!failed.isEmpty && failed.allSatisfy { $0.contains("not a PNG") && !$0.contains("notPNG") }, "\(failed)")
    }

    /// Before: a symbolic link at an asset's path was logged as a failed asset again at every retry after a SIGHUP.
    @Test func aConflictIsWrittenOnceThoughEveryReloadRetriesIt() async throws {
        let gallery = try await GalleryFixture(count: 3, imageSize: .small)
        let dir = TemporaryDirectory("log-conflict")
        let outside = TemporaryDirectory("log-conflict-outside")
        try writeBytes(Array("mine\n".utf8), to: outside.file("mine.txt"))
        try FileManager.default.createSymbolicLink(atPath: dir.file("gallery_image_2.png"), withDestinationPath: outside.file("mine.txt"))
        let agent = try await RunningAgent(try gallery.configuration(dir: dir.path))
        func passLines() -> [String] { logLines(dir.path).filter { $0.contains("event=pass") } }
        #expect(await eventually { passLines().count == 1 })
        for passes in 2...3 {
            _ = await agent.keeper.reload()  // what SIGHUP does: failures forgotten, every entry accessed again
            #expect(await eventually { passLines().count == passes })
        }
        #expect(await agent.stop() == .success)
        await gallery.stop()
        let lines = assetLines(logLines(dir.path))["key=/gallery/image?2"] ?? []
        #expect(lines.filter { $0.contains("result=failed") }.count == 1, "\(lines)")
        #expect(logLines(dir.path).filter { $0.contains("event=conflict") }.count == 1)
        #expect(readBytes(outside.file("mine.txt")) == Array("mine\n".utf8))
    }

    /// An answer that is still no image when asked again (an hour later by default; here at once) is the same
    /// failure: at debug, not a warning per retry (10,000 error items of a 100,000 gallery made 10,000 lines an hour).
    @Test func theSameFailureAtItsRetryGoesToDebug() async throws {
        let gallery = try await GalleryFixture(count: 10, imageSize: .small)  // item 10 answers with a JSON error
        let dir = TemporaryDirectory("log-retry")
        var configuration = try gallery.configuration(dir: dir.path)
        configuration.logging.level = .debug
        configuration.http.retryPolicy = RetryPolicy(base: .milliseconds(100), cap: .milliseconds(200), unusableAnswer: .milliseconds(200))
        let agent = try await RunningAgent(configuration)
        func failed() -> [String] { (assetLines(logLines(dir.path))["key=/gallery/image?10"] ?? []).filter { $0.contains("result=failed") } }
        // Retried until asked again twice: each answer the same JSON, each a failure like the first. Synchronised on
        // the lines themselves: the gallery counts a request before its answer has reached the agent, so stopping
        // at the third request could cancel the third failure before it was logged.
        #expect(await eventually { gallery.server.requestCount(path: "/gallery/image?10") >= 3 && failed().count >= 3 })
        #expect(await agent.stop() == .success)
        await gallery.stop()
        let lines = failed()
        #expect(lines.filter { $0.contains("level=warning") }.count == 1, "\(lines)")
        #expect(lines.filter { $0.contains("level=debug") }.count >= 2, "\(lines)")
    }

    @Test func aFailureOnRecordIsWrittenOnceNotAtEveryPass() async throws {
        let gallery = try await GalleryFixture(count: 20, imageSize: .small)
        let dir = TemporaryDirectory("log-remembered")
        let agent = try await gallery.startAgent(dir: dir)
        func passLines() -> [String] { logLines(dir.path).filter { $0.contains("event=pass") } }
        #expect(await eventually { passLines().count == 1 })
        // Two more full passes (as SIGHUP asks): every entry accessed again, the error items refused from memory.
        for passes in 2...3 {
            await agent.keeper.pollNow(fullPass: true)
            #expect(await eventually { passLines().count == passes })
        }
        #expect(await agent.stop() == .success)
        await gallery.stop()

        let lines = logLines(dir.path)
        for n in gallery.errorNumbers {
            let failed = (assetLines(lines)["key=/gallery/image?\(n)"] ?? []).filter { $0.contains("result=failed") }
            #expect(failed.count == 1, "item \(n): \(failed)")
        }
        let last = try #require(passLines().last)
        #expect(last.contains("failing=\(gallery.errorNumbers.count)"), "\(last)")
        #expect(last.contains("remembered=\(gallery.errorNumbers.count)"), "\(last)")
    }
}
