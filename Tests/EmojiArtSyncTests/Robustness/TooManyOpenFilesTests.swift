import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The agent running out of file descriptors (`EMFILE`), on the real path: an agent process whose soft
/// `RLIMIT_NOFILE` this test lowers to 3 with `prlimit(1)`, so that every new descriptor it asks for (a temporary
/// file, a socket, the status file) fails while those it holds (index, log, inotify, lock) keep working; then
/// raised back. Nothing already synced may be lost, nothing partial left, each failure said with its cause, and
/// the agent must catch up on its own once descriptors are available again.
@Suite(.timeLimit(.minutes(3)))
struct TooManyOpenFilesTests {
    /// Sets the soft limit on open files of process `pid`, keeping its hard limit, with util-linux's `prlimit(1)`
    /// (Glibc's `prlimit(2)` wrapper is not visible to Swift without `_GNU_SOURCE`).
    static func setOpenFileLimit(of pid: pid_t, to soft: Int) throws {
        let tool = try ChildProcess.runBlocking(
            executable: "/usr/bin/prlimit", ["--pid", "\(pid)", "--nofile=\(soft):"], mergingStandardError: true)
        guard tool.status == 0 else {
            throw TestFailure("prlimit --pid \(pid) --nofile=\(soft): exit \(tool.status ?? -1): \(tool.stdout)")
        }
    }

    @Test func runningOutOfDescriptorsIsReportedLosesNothingAndIsCaughtUpOnItsOwn() async throws {
        let gallery = try await GalleryFixture(count: 9)
        let out = TemporaryDirectory("emfile-out")
        let dir = TemporaryDirectory("emfile")
        let agent = try AgentProcess(["--dir", dir.path, "--server", gallery.baseURL, "-q", "--interval", "3600"], outputDirectory: out.path)
        defer { agent.signal(SIGKILL) }
        let synced = await eventually { gallery.validNumbers.allSatisfy { gallery.isMirrored($0, in: dir) } }
        try #require(synced, "first sync: \(agent.stderr)")
        let kept = gallery.validNumbers.filter { $0 != 3 && $0 != 5 }
        let keptBytes = kept.map { readBytes(dir.file("gallery_image_\($0).png")) }

        try Self.setOpenFileLimit(of: agent.pid, to: 3)
        let start = logLines(dir.path).count
        unlink(dir.file("gallery_image_3.png"))
        unlink(dir.file("gallery_image_5.png"))
        // Each repair fails, and says why: the temporary file (or the socket) cannot be opened.
        let failedClearly = await eventually {
            let failed = logLines(dir.path).dropFirst(start).filter {
                $0.contains("event=asset") && $0.contains("result=failed") && $0.contains("Too many open files")
            }
            return [3, 5].allSatisfy { n in failed.contains { $0.split(separator: " ").contains("key=/gallery/image?\(n)") } }
        }
        #expect(failedClearly, "no failure line naming the cause: \(logLines(dir.path).dropFirst(start).joined(separator: "\n"))")
        #expect(!FileManager.default.fileExists(atPath: dir.file("gallery_image_3.png")), "no partial file in DIR")
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty, "no partial file in tmp/")
        #expect(kept.map { readBytes(dir.file("gallery_image_\($0).png")) } == keptBytes, "nothing already synced is lost")

        try Self.setOpenFileLimit(of: agent.pid, to: 1024)
        let recovered = await eventually { [3, 5].allSatisfy { gallery.isMirrored($0, in: dir) } }
        #expect(recovered, "the agent catches up on its own: \(logLines(dir.path).dropFirst(start).joined(separator: "\n"))")
        #expect(await eventually { (try? AgentStatus.read(from: dir.file(".emojiart-sync/status.json")))?.assets.ok == gallery.validNumbers.count })
        agent.signal(SIGTERM)
        #expect(await agent.waitForExit() == 0, "\(agent.stderr)")
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)
        await gallery.stop()
    }
}

extension TooManyOpenFilesTests {
    /// Started where it may never open enough files (a hard `RLIMIT_NOFILE` below what it needs), the agent says
    /// so and how to raise it, and exits 1, whatever the limit. Before, depending on the limit, it called the folder
    /// not writable ("Too many open files"), failed to open its index ("unable to open database file"), or died
    /// with `SIGILL` (the Swift runtime's dispatch pool could not open `/proc` to watch its threads: 20 to 28 files).
    @Test(arguments: [14, 20, 24, 28, 40])
    func startingWithTooFewFilesSaysSoAndHowToRaiseTheLimit(_ files: Int) async throws {
        let gallery = try await GalleryFixture(count: 3)
        let out = TemporaryDirectory("emfile-start-out")
        let dir = TemporaryDirectory("emfile-start")
        let run = try await ChildProcess.run(
            executable: "/usr/bin/prlimit",
            ["--nofile=\(files)", AgentProcess.binary, "--once", "--dir", dir.path, "--server", gallery.baseURL], outputDirectory: out.path)
        #expect(run.exited && run.status == 1, "\(run.stderr)")
        #expect(run.stderr == """
            emojiart-sync: the agent may open at most \(files) files (RLIMIT_NOFILE) and needs 64 with --concurrency 8: \
            raise the limit (ulimit -Hn, or LimitNOFILE= in its unit)

            """, "\(run.stderr)")
        #expect(dir.names().isEmpty, "nothing was made in DIR")
        await gallery.stop()
    }
}
