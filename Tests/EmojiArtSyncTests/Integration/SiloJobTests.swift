import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// How many times the agent's work enters the `SyncActor` silo, counted by the silo's executor itself
/// (`EMOJIART_SYNC_COUNT_SILO_JOBS=1` makes it a `CountingSiloExecutor`: every job that enters is counted, whatever
/// the code under test does). The built binary runs `--once` as a user runs it and writes `silo_jobs=` in its
/// `event=pass` line. Docs: docs/ARCHITECTURE.md, "A miss".
@Suite(.timeLimit(.minutes(2)))
struct SiloJobTests {
    /// A cold pass: every valid item is a miss. Each costs at most five jobs of the silo (the decision is shared by
    /// its batch; then the job of the miss enters once to commit, is resumed by the commit, and the pass collects
    /// it), whatever the feed's size; a warm pass costs at most two per batch of 256 entries.
    @Test func aMissEntersTheSiloAtMostFiveTimesAndAWarmBatchAtMostTwice() async throws {
        let gallery = try await GalleryFixture(count: 400, imageSize: .small)
        let dir = TemporaryDirectory("silo-jobs")
        let out = TemporaryDirectory("silo-jobs-out")
        let arguments = ["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q"]
        let counting = ["EMOJIART_SYNC_COUNT_SILO_JOBS": "1"]

        let cold = try await AgentProcess.run(arguments, outputDirectory: out.path, environment: counting)
        let warm = try await AgentProcess.run(arguments, outputDirectory: out.path, environment: counting)
        await gallery.stop()
        #expect(cold.status == ExitStatus.partial.rawValue, "\(cold.stderr)")  // the book's error items fail
        let passes = logLines(dir.path).filter { $0.contains("event=pass") }
        try #require(passes.count == 2, "\(passes)")
        let coldJobs = try Self.field("silo_jobs", in: passes[0])
        let misses = try Self.field("network", in: passes[0]) + gallery.errorNumbers.count  // a failed load is a miss too
        let (warmJobs, diskHits) = (try Self.field("silo_jobs", in: passes[1]), try Self.field("disk", in: passes[1]))
        #expect(misses == 400)
        #expect(diskHits == gallery.validNumbers.count)
        // Fixed costs (the feed, the sweep, the flushes at the end) are shared; per miss, five at most (a file that
        // commits its batch alone: its job enters, is resumed after the flush and after the directory's fsync, may
        // be handed the batch, and is collected by the pass).
        #expect(coldJobs <= 5 * misses + 60, "\(coldJobs) silo jobs for \(misses) misses")
        let batches = (3 * 400 + FeedPass.batchSize - 1) / FeedPass.batchSize
        #expect(warmJobs <= 2 * batches + 20, "\(warmJobs) silo jobs for a warm pass of \(batches) batches")
        #expect(warm.status == ExitStatus.partial.rawValue, "\(warm.stderr)")
    }

    /// A copy of DIR (`cp -a`: the same bytes under new inodes, as a restore from a backup or a move to another
    /// disk makes) is a warm pass whose every file must be read: each is read once, adopted (its new identity
    /// recorded), and a disk hit, with no request for it. The files of a batch are looked at together, so the silo
    /// is entered a few times per batch of 256 entries, not several times per file (each file was a job of its own,
    /// with a transaction of its own, and a copied mirror of 100,000 took 16 s where a warm one took 2).
    @Test func aCopiedDirectoryIsVerifiedABatchAtATime() async throws {
        let gallery = try await GalleryFixture(count: 400, imageSize: .small)
        let dir = TemporaryDirectory("silo-jobs-copy")
        let copy = TemporaryDirectory("silo-jobs-copy-2")
        let out = TemporaryDirectory("silo-jobs-copy-out")
        let counting = ["EMOJIART_SYNC_COUNT_SILO_JOBS": "1"]
        _ = try await AgentProcess.run(["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q"], outputDirectory: out.path)
        try FileManager.default.removeItem(atPath: copy.path)
        let cp = try Process.run(URL(fileURLWithPath: "/bin/cp"), arguments: ["-a", dir.path, copy.path])
        cp.waitUntilExit()
        try #require(cp.terminationStatus == 0)
        gallery.server.resetCounts()

        let copied = try await AgentProcess.run(
            ["--dir", copy.path, "--server", gallery.baseURL, "--once", "-q"], outputDirectory: out.path, environment: counting)
        #expect(copied.status == ExitStatus.partial.rawValue, "\(copied.stderr)")  // the book's error items, on record
        let imageRequests = gallery.validNumbers.map { gallery.server.requestCount(path: "/gallery/image?\($0)") }.reduce(0, +)
        await gallery.stop()
        let pass = try #require(logLines(copy.path).last { $0.contains("event=pass") })
        let valid = gallery.validNumbers.count
        #expect(try Self.field("files_read", in: pass) == valid, "each copied file is read once: \(pass)")
        #expect(try Self.field("disk", in: pass) == valid && (try Self.field("network", in: pass)) == 0, "\(pass)")
        #expect(imageRequests == 0)
        for number in gallery.validNumbers.prefix(5) {
            #expect(readBytes(copy.file("gallery_image_\(number).png")) == gallery.server.imageBytes(number))
        }
        let batches = (3 * 400 + FeedPass.batchSize - 1) / FeedPass.batchSize
        let jobs = try Self.field("silo_jobs", in: pass)
        #expect(jobs <= 5 * batches + 40, "\(jobs) silo jobs to verify \(valid) files in \(batches) batches")
    }

    /// A rescan that finds every file changed (the files touched, as `touch` or `chmod -R` of DIR leaves them,
    /// then `SIGHUP`) looks at them a page of the index at a time: the files of a page in one job off the silo and
    /// one transaction, not a job and a transaction each. What it recorded holds: a `--once` afterwards reads none.
    @Test func aRescanThatFindsEveryFileChangedLooksAtThemAPageAtATime() async throws {
        let gallery = try await GalleryFixture(count: 400, imageSize: .small)
        let dir = TemporaryDirectory("silo-jobs-rescan")
        let out = TemporaryDirectory("silo-jobs-rescan-out")
        let agent = try AgentProcess(
            ["--dir", dir.path, "--server", gallery.baseURL, "-q", "--interval", "3600"], outputDirectory: out.path,
            environment: ["EMOJIART_SYNC_COUNT_SILO_JOBS": "1"])
        defer { agent.signal(SIGKILL) }
        func polls() -> [String] { logLines(dir.path).filter { $0.contains("event=poll") && $0.contains("result=ok") } }
        try #require(await eventually { polls().count == 1 })
        let images = dir.names().filter { $0.hasSuffix(".png") }
        #expect(images.count == gallery.validNumbers.count)
        var later = [timespec(tv_sec: 1_700_000_000, tv_nsec: 0), timespec(tv_sec: 1_700_000_000, tv_nsec: 0)]
        for name in images { #expect(utimensat(AT_FDCWD, dir.file(name), &later, AT_SYMLINK_NOFOLLOW) == 0) }

        agent.signal(SIGHUP)
        try #require(await eventually { polls().count == 2 })
        let jobs = try Self.field("silo_jobs", in: polls()[1])
        agent.signal(SIGTERM)
        #expect(await agent.waitForExit(timeout: .seconds(30)) == 0)
        let batches = (3 * 400 + FeedPass.batchSize - 1) / FeedPass.batchSize
        #expect(jobs <= 5 * batches + 40, "\(jobs) silo jobs for a poll whose rescan checked \(images.count) files")

        _ = try await AgentProcess.run(["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q"], outputDirectory: out.path)
        await gallery.stop()
        let pass = try #require(logLines(dir.path).last { $0.contains("event=pass") && $0.contains("files_read=") })
        #expect(try Self.field("files_read", in: pass) == 0, "the rescan recorded every file's new fingerprint: \(pass)")
        #expect(try Self.field("disk", in: pass) == images.count, "\(pass)")
    }

    /// The agent's own renames into DIR are not checked again by its watcher: the agent's cold sync costs the silo
    /// what `--once`'s does, plus the agent's own few jobs (status, watcher start): 1,567 against 1,537 for this
    /// gallery. Before, each `IN_MOVED_TO` of the agent's own was a check as urgent as a person's change: 3,170-3,296
    /// here, and at 100,000 assets 90,000 more looks.
    @Test func theAgentsColdSyncCostsTheSiloWhatOnceDoes() async throws {
        let gallery = try await GalleryFixture(count: 400, imageSize: .small)
        let once = TemporaryDirectory("silo-jobs-once")
        let dir = TemporaryDirectory("silo-jobs-agent")
        let out = TemporaryDirectory("silo-jobs-agent-out")
        let counting = ["EMOJIART_SYNC_COUNT_SILO_JOBS": "1"]
        _ = try await AgentProcess.run(
            ["--dir", once.path, "--server", gallery.baseURL, "--once", "-q"], outputDirectory: out.path, environment: counting)
        let oncePass = try #require(logLines(once.path).first { $0.contains("event=pass") })
        let onceJobs = try Self.field("silo_jobs", in: oncePass)
        let agent = try AgentProcess(
            ["--dir", dir.path, "--server", gallery.baseURL, "-q", "--interval", "3600"], outputDirectory: out.path,
            environment: counting)
        defer { agent.signal(SIGKILL) }
        let poll = await eventually { logLines(dir.path).contains { $0.contains("event=poll") && $0.contains("result=ok") } }
        try #require(poll)
        agent.signal(SIGTERM)
        #expect(await agent.waitForExit(timeout: .seconds(30)) == 0)
        await gallery.stop()
        let agentPoll = try #require(logLines(dir.path).first { $0.contains("event=poll") && $0.contains("result=ok") })
        let agentJobs = try Self.field("silo_jobs", in: agentPoll)
        #expect(agentJobs <= onceJobs + 200, "the agent's cold sync: \(agentJobs) silo jobs; --once's: \(onceJobs)")
        #expect(!logLines(dir.path).contains { $0.contains("event=repair") })
    }

    /// Without the variable the silo's executor is the ordinary one, and no count is written.
    @Test func nothingIsCountedUnlessAsked() async throws {
        let gallery = try await GalleryFixture(count: 12, imageSize: .small)
        let dir = TemporaryDirectory("silo-jobs-off")
        let out = TemporaryDirectory("silo-jobs-off-out")
        _ = try await AgentProcess.run(["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q"], outputDirectory: out.path)
        await gallery.stop()
        let pass = try #require(logLines(dir.path).first { $0.contains("event=pass") })
        #expect(!pass.contains("silo_jobs="))
    }

    private static func field(_ name: String, in line: String) throws -> Int {
        let value = line.split(separator: " ").first { $0.hasPrefix(name + "=") }?.dropFirst(name.count + 1)
        return try #require(value.flatMap { Int($0) }, "no \(name)= in \(line)")
    }
}
