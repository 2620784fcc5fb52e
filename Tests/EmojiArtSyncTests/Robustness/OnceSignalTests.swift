import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `purge` and signals sent to a `--once` run: the run traps them (before it takes the lock), answers a memory
/// purge the way the agent does, refuses a disk purge by name, and stops cleanly on SIGTERM.
@Suite(.timeLimit(.minutes(3)))
struct OnceSignalTests {
    /// A gallery slow enough that a `--once` run of 9 images, one transfer at a time, is still syncing when the
    /// test acts on it.
    static let slow = GalleryFaults(latencyMilliseconds: 250)

    /// Starts `--once` and returns once it holds the lock and has asked the gallery for an image.
    static func startSlowOnce(_ gallery: GalleryFixture, dir: TemporaryDirectory, out: TemporaryDirectory) async throws -> AgentProcess {
        let run = try AgentProcess(
            ["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q", "--concurrency", "1"], outputDirectory: out.path)
        let syncing = await eventually {
            DirectoryLock.holder(path: dir.file(".emojiart-sync/lock")) == run.pid && gallery.server.imageRequestCount >= 1
        }
        guard syncing else {
            run.signal(SIGKILL)
            throw TestFailure("the --once run never started syncing: \(run.stderr)")
        }
        return run
    }

    @Test func aMemoryPurgeDuringOnceIsAnsweredAndTheRunStillSucceeds() async throws {
        let gallery = try await GalleryFixture(count: 9, faults: Self.slow)
        let out = TemporaryDirectory("once-purge-out")
        let dir = TemporaryDirectory("once-purge")
        let run = try await Self.startSlowOnce(gallery, dir: dir, out: out)
        defer { run.signal(SIGKILL) }

        let purge = try await AgentProcess.run(["purge", "memory", "--dir", dir.path, "--timeout", "10"], outputDirectory: out.path)
        #expect(purge.status == 0, "purge: \(purge.stderr)")
        #expect(purge.stdout.contains("purged memory:") && purge.stdout.contains("(agent PID \(run.pid))"), "\(purge.stdout)")

        let status = await run.waitForExit(timeout: .seconds(60))
        #expect(status == 0, "the --once run must survive the purge: status \(String(describing: status)), \(run.stderr)")
        #expect((1...9).allSatisfy { gallery.isMirrored($0, in: dir) })
        let lines = logLines(dir.path)
        let purged = lines.firstIndex { $0.contains("event=purge") && $0.contains("scope=memory") }
        let summary = lines.firstIndex { $0.contains("event=pass") }
        #expect(purged != nil && summary != nil && purged! < summary!, "the purge is logged during the run")
        await gallery.stop()
    }

    @Test func aDiskPurgeDuringOnceIsRefusedByNameAndTheRunStillSucceeds() async throws {
        let gallery = try await GalleryFixture(count: 9, faults: Self.slow)
        let out = TemporaryDirectory("once-disk-out")
        let dir = TemporaryDirectory("once-disk")
        let run = try await Self.startSlowOnce(gallery, dir: dir, out: out)
        defer { run.signal(SIGKILL) }

        let purge = try await AgentProcess.run(["purge", "disk", "--dir", dir.path, "--timeout", "10"], outputDirectory: out.path)
        #expect(purge.status == ExitStatus.fatal.rawValue)
        #expect(purge.stderr.contains("--once"), "the refusal names why: \(purge.stderr)")

        #expect(await run.waitForExit(timeout: .seconds(60)) == 0, "\(run.stderr)")
        #expect((1...9).allSatisfy { gallery.isMirrored($0, in: dir) }, "nothing was purged")
        #expect(logLines(dir.path).contains { $0.contains("event=purge") && $0.contains("scope=disk") && $0.contains("result=refused") })
        await gallery.stop()
    }

    @Test func sigtermStopsOnceCleanlyAndSighupDoesNotKillIt() async throws {
        let gallery = try await GalleryFixture(count: 9, faults: Self.slow)
        let out = TemporaryDirectory("once-term-out")
        let dir = TemporaryDirectory("once-term")
        let run = try await Self.startSlowOnce(gallery, dir: dir, out: out)
        defer { run.signal(SIGKILL) }

        run.signal(SIGHUP)
        run.signal(SIGUSR2)
        #expect(await eventually { logLines(dir.path).contains { $0.contains("event=purge") && $0.contains("result=refused") } })
        #expect(await eventually { logLines(dir.path).contains { $0.contains("event=signal") && $0.contains("signal=SIGHUP") } })
        run.signal(SIGTERM)
        let status = await run.waitForExit(timeout: .seconds(10))
        #expect(status == 128 + SIGTERM, "an interrupted --once says so: \(String(describing: status)) \(run.stderr)")
        #expect(run.stderr.contains("interrupted"), "\(run.stderr)")
        // The pass stops: the one transfer in flight may fail, the assets it never reached are not logged as
        // failed (before, each of them was begun after the stop and failed at once, a line each).
        let failed = logLines(dir.path).filter { $0.contains("result=failed") }
        #expect(failed.count <= 1, "\(failed.count) failure lines after SIGTERM: \(failed)")
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)
        #expect(DirectoryLock.holder(path: dir.file(".emojiart-sync/lock")) == nil)
        await gallery.stop()
    }
}
