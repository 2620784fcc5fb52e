import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real binary: exit codes, signals, the lock, `status` and `purge`.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct CommandLineTests {
    @Test func onceExitCodesMeanWhatTheManPageSays() async throws {
        let out = TemporaryDirectory("cli-out")
        let partial = try await GalleryFixture(count: 12)
        let dir1 = TemporaryDirectory("cli-partial")
        let run1 = try await AgentProcess.run(["--dir", dir1.path, "--server", partial.baseURL, "--once", "-q"], outputDirectory: out.path)
        #expect(run1.status == ExitStatus.partial.rawValue)
        #expect(run1.stderr.contains("/gallery/image?10"))
        await partial.stop()

        let complete = try await GalleryFixture(count: 9)
        let dir2 = TemporaryDirectory("cli-complete")
        let run2 = try await AgentProcess.run(["--dir", dir2.path, "--server", complete.baseURL, "--once"], outputDirectory: out.path)
        #expect(run2.status == ExitStatus.success.rawValue, "\(run2.stderr)")
        #expect(run2.stderr.contains("hit=network"), "log lines go to stderr too")
        await complete.stop()

        let dead = TemporaryDirectory("cli-dead")
        let run3 = try await AgentProcess.run(["--dir", dead.path, "--server", complete.baseURL, "--once", "-q", "--retries", "0"], outputDirectory: out.path)
        #expect(run3.status == ExitStatus.fatal.rawValue)
        #expect(run3.stderr.contains("refused"), "\(run3.stderr)")

        let usage = try await AgentProcess.run(["--dir", dead.path, "--concurrency", "0"], outputDirectory: out.path)
        #expect(usage.status == ExitStatus.usage.rawValue)
        let missing = try await AgentProcess.run(["--once"], outputDirectory: out.path)
        #expect(missing.status == ExitStatus.usage.rawValue)
        let help = try await AgentProcess.run(["--help"], outputDirectory: out.path)
        #expect(help.status == 0 && help.stdout.contains("SIGUSR2") && help.stdout.contains("--max-delete"))
    }

    /// A finished `--once` exits without freeing its state or closing the index (`RunCommand.endProcess`): what it
    /// wrote is all in the index file, the write-ahead log is empty, the checkpoint's record holds (the next start
    /// skips its `quick_check`), and the next run finds every file as recorded.
    @Test func aFinishedOnceRunLeavesTheIndexAsItsCheckpointRecordedIt() async throws {
        let out = TemporaryDirectory("cli-out")
        let gallery = try await GalleryFixture(count: 9)
        let dir = TemporaryDirectory("cli-index-at-exit")
        let cold = try await AgentProcess.run(["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q"], outputDirectory: out.path)
        #expect(cold.status == ExitStatus.success.rawValue, "\(cold.stderr)")
        let wal = dir.file(".emojiart-sync/index.sqlite3-wal")
        #expect((try? FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int) ?? 0 == 0, "nothing left in the log")
        #expect(await AssetIndex.checkpointStillHolds(SyncDirectory(dir.path)), "the index is as the checkpoint left it")
        #expect(try await indexedFileNames(in: dir.path).count == gallery.validNumbers.count, "every file written is recorded")

        let warm = try await AgentProcess.run(["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q"], outputDirectory: out.path)
        await gallery.stop()
        #expect(warm.status == ExitStatus.success.rawValue, "\(warm.stderr)")
        let hits = logLines(dir.path).filter { $0.contains("event=asset") && $0.contains("hit=disk") }
        #expect(hits.count == gallery.validNumbers.count, "the second run trusts every file as recorded")
    }

    @Test func aOnceRunMissingManyAssetsNamesTheFirstTwentyAndCountsTheRest() async throws {
        let out = TemporaryDirectory("cli-out")
        let gallery = try await GalleryFixture(count: 300, imageSize: .small)  // 30 error items
        let dir = TemporaryDirectory("cli-many-missing")
        let run = try await AgentProcess.run(["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q"], outputDirectory: out.path)
        await gallery.stop()
        #expect(run.status == ExitStatus.partial.rawValue)
        let named = run.stderr.split(separator: "\n").filter { $0.hasPrefix("  /gallery/image?") }
        // The first twenty in key order: those of the thirty that sort first.
        let firstTwenty = stride(from: 10, through: 300, by: 10).map { "/gallery/image?\($0)" }.sorted().prefix(20)
        #expect(named.map { String($0.dropFirst(2).prefix { $0 != ":" }) } == Array(firstTwenty), "\(run.stderr)")
        #expect(run.stderr.contains("... and 10 more"), "\(run.stderr)")
        let failedKeys = Set(logLines(dir.path).filter { $0.contains("result=failed") }.compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("key=") }
        })
        #expect(failedKeys.count == 30, "the log names every one")
    }

    @Test func aSecondAgentOnTheSameDirectoryIsRefusedWithTheFirstOnesPID() async throws {
        let gallery = try await GalleryFixture(count: 3)
        let out = TemporaryDirectory("lock-out")
        let dir = TemporaryDirectory("lock")
        let first = try AgentProcess(["--dir", dir.path, "--server", gallery.baseURL, "-q"], outputDirectory: out.path)
        #expect(await eventually { FileManager.default.fileExists(atPath: dir.file("gallery_image_3.png")) })
        let second = try await AgentProcess.run(["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q"], outputDirectory: out.path)
        #expect(second.status == ExitStatus.locked.rawValue)
        #expect(second.stderr.contains("PID \(first.pid)"), "\(second.stderr)")
        first.signal(SIGTERM)
        #expect(await first.waitForExit() == 0)
        await gallery.stop()
    }

    @Test func signalsDoWhatTheManPageSays() async throws {
        let gallery = try await GalleryFixture(count: 5)
        let out = TemporaryDirectory("sig-out")
        let dir = TemporaryDirectory("sig")
        try writeBytes(Array("mine\n".utf8), to: dir.file("user-notes.txt"))
        let agent = try AgentProcess(["--dir", dir.path, "--server", gallery.baseURL, "-q", "--interval", "3600"], outputDirectory: out.path)
        defer { agent.signal(SIGKILL) }
        let allThere = await eventually { (1...5).allSatisfy { FileManager.default.fileExists(atPath: dir.file("gallery_image_\($0).png")) } }
        #expect(allThere)
        #expect(await eventually { (try? AgentStatus.read(from: dir.file(".emojiart-sync/status.json")))?.assets.ok == 5 })

        // status, human and JSON.
        let human = try await AgentProcess.run(["status", "--dir", dir.path], outputDirectory: out.path)
        #expect(human.status == 0)
        #expect(human.stdout.contains("PID \(agent.pid)") && human.stdout.contains("5 ok"), "\(human.stdout)")
        let json = try await AgentProcess.run(["status", "--dir", dir.path, "--json"], outputDirectory: out.path)
        let parsed = try AgentStatus.decoder.decode(AgentStatus.self, from: Data(json.stdout.utf8))
        #expect(parsed.pid == agent.pid && parsed.hits.network == 5)

        // SIGUSR1 through `purge memory`.
        let purgeMemory = try await AgentProcess.run(["purge", "memory", "--dir", dir.path], outputDirectory: out.path)
        #expect(purgeMemory.status == 0, "\(purgeMemory.stderr)")
        #expect(purgeMemory.stdout.contains("purged memory: 5 entries"), "\(purgeMemory.stdout)")
        #expect(logLines(dir.path).contains { $0.contains("event=purge") && $0.contains("scope=memory") && $0.contains("entries=5") })

        // SIGUSR2: the agent's files go and come back from the network; the user's file stays.
        gallery.server.resetCounts()
        let purgeDisk = try await AgentProcess.run(["purge", "disk", "--dir", dir.path], outputDirectory: out.path)
        #expect(purgeDisk.status == 0, "\(purgeDisk.stderr)")
        #expect(purgeDisk.stdout.contains("purged disk: 5 files"), "\(purgeDisk.stdout)")
        #expect(await eventually { gallery.server.imageRequestCount == 5 && (1...5).allSatisfy { readBytes(dir.file("gallery_image_\($0).png")) == gallery.server.imageBytes($0) } })
        #expect(readBytes(dir.file("user-notes.txt")) == Array("mine\n".utf8))

        // SIGHUP: the feed is polled now.
        let pollsBefore = gallery.server.requestCount(path: "/gallery/images")
        agent.signal(SIGHUP)
        #expect(await eventually { gallery.server.requestCount(path: "/gallery/images") > pollsBefore })

        // SIGTERM: exit 0 (the next poll is an hour away: an agent that slept until then would not exit in time),
        // no temporary files, the index on disk; the last status is stamped with the moment it stopped (the
        // published time has whole seconds: wait until the clock is past the start's).
        let running = try AgentStatus.read(from: dir.file(".emojiart-sync/status.json"))
        #expect(await eventually { Date().timeIntervalSince(running.startedAt) >= 1 })
        let stopAsked = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        agent.signal(SIGTERM)
        let status = await agent.waitForExit(timeout: .seconds(30))
        #expect(status == 0)
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)
        #expect(FileManager.default.fileExists(atPath: dir.file(".emojiart-sync/index.sqlite3")))
        #expect(logLines(dir.path).contains { $0.contains("event=stop") })
        let stopped = try AgentStatus.read(from: dir.file(".emojiart-sync/status.json"))
        #expect(stopped.state == "stopped")
        #expect(stopped.updatedAt >= stopAsked, "stamped \(stopped.updatedAt), stop asked at \(stopAsked)")

        // With no agent: status and purge say so and exit 1.
        let none = try await AgentProcess.run(["status", "--dir", dir.path], outputDirectory: out.path)
        #expect(none.status == 1 && none.stderr.contains("no agent runs"))
        let nonePurge = try await AgentProcess.run(["purge", "memory", "--dir", dir.path], outputDirectory: out.path)
        #expect(nonePurge.status == 1 && nonePurge.stderr.contains("no agent runs"))
        await gallery.stop()
    }

    @Test func sigtermDuringATransferStillExitsCleanlyAndQuickly() async throws {
        let slowRecord = Shared<GalleryRequestRecord?>(nil)
        let gallery = try await GalleryFixture(
            count: 5, faults: GalleryFaults(imageFaults: [1: .slow(milliseconds: 20_000), 2: .endless]),
            requestLogger: { if $0.path == "/gallery/image?1" { slowRecord.set($0) } })
        let out = TemporaryDirectory("term-out")
        let dir = TemporaryDirectory("term")
        // The endless body is cut at 4 MiB, not the default 1 GiB it would otherwise write to disk meanwhile.
        let agent = try AgentProcess(
            ["--dir", dir.path, "--server", gallery.baseURL, "-q", "--max-body-size", "4M"], outputDirectory: out.path)
        defer { agent.signal(SIGKILL) }
        // Image 1's request reached the gallery, which holds it for 20 s: a transfer is in flight.
        #expect(await eventually { gallery.server.requestCount(path: "/gallery/image?1") >= 1 })
        agent.signal(SIGTERM)
        #expect(await agent.waitForExit(timeout: .seconds(30)) == 0)
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)
        #expect(!FileManager.default.fileExists(atPath: dir.file("gallery_image_1.png")))
        // Quickly: the agent hung up in the middle of the 20 s body instead of waiting for it.
        #expect(await eventually { slowRecord.value != nil })
        #expect(slowRecord.value.map { $0.bytes < gallery.server.imageBytes(1).count } == true, "\(String(describing: slowRecord.value))")
        await gallery.stop()
    }
}
