@testable import EmojiArtSync
import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// DIR removed, moved away or replaced under a running agent, with real inotify and real `rm`: the agent stops
/// with exit status 1 naming the folder, and puts nothing back. Before, it recreated DIR and went on (or, after
/// `rm -rf DIR; mkdir DIR`, logged a failed temporary file for every repair, forever), and restored files into
/// the folder while `rm -rf` was removing it.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct VanishingDirectoryTests {
    enum Vanishing: String, CaseIterable, Sendable {
        case removed, removedAndMadeAgain, movedAway, replacedBySymlink, stateDirectoryRemoved
    }

    /// Runs `/bin/rm -rf path` and returns its exit status.
    static func removeTree(_ path: String) throws -> Int32 {
        try ChildProcess.runBlocking(executable: "/bin/rm", ["-rf", path]).status ?? -1
    }

    static func contents(_ path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    @Test(arguments: Vanishing.allCases)
    func theAgentStopsWithStatus1NamingTheFolderAndRestoresNothing(_ how: Vanishing) async throws {
        let gallery = try await GalleryFixture(count: 29)
        let parent = TemporaryDirectory("vanish")
        let dirPath = parent.file("emoji")
        var configuration = try gallery.configuration(dir: dirPath)
        configuration.schedule.pollInterval = .seconds(3600)
        let agent = try await RunningAgent(configuration)
        let ended = Mutex<EmojiArtSync.ExitStatus?>(nil)
        let watcher = Task {
            let status = await agent.task.value
            ended.withLock { $0 = status }
        }
        // Synced, the pass over (`event=pass`) and its status written: the agent is idle. The deletions `rm` makes
        // ring for a status, which waits for the rename gate (`StatusService`); before it did, its temporary file in
        // the state directory made `rm -rf` fail with "Directory not empty" (a fresh-clone CI run failed here).
        let synced = await eventually {
            gallery.validNumbers.allSatisfy { FileManager.default.fileExists(atPath: dirPath + "/gallery_image_\($0).png") }
                && logLines(dirPath).contains { $0.contains("event=pass") }
                && (try? AgentStatus.read(from: dirPath + "/.emojiart-sync/status.json"))?.assets.ok == gallery.validNumbers.count
        }
        try #require(synced)
        let elsewhere = parent.file("elsewhere")
        switch how {
        case .removed, .removedAndMadeAgain:
            #expect(try Self.removeTree(dirPath) == 0, "rm -rf removed the folder (nothing was put back meanwhile)")
            if how == .removedAndMadeAgain { #expect(mkdir(dirPath, 0o755) == 0) }
        case .movedAway, .replacedBySymlink:
            #expect(rename(dirPath, parent.file("emoji.old")) == 0)
            if how == .replacedBySymlink {
                #expect(mkdir(elsewhere, 0o755) == 0)
                #expect(symlink(elsewhere, dirPath) == 0)
            }
        case .stateDirectoryRemoved:
            // The status the pass's end rang for may be written while rm lists the folder (a loaded machine makes
            // that likely), and then rmdir finds it not empty: rm again. An agent that kept putting files back
            // would fail every time.
            #expect(await eventually { (try? Self.removeTree(dirPath + "/.emojiart-sync")) == 0 })
        }
        let stopped = await eventually(timeout: .seconds(20)) { ended.withLock { $0 } != nil }
        if !stopped { _ = await agent.stop() }
        _ = await watcher.result
        #expect(ended.withLock { $0 } == .fatal, "exit status 1")
        let message = agent.background.failure?.message ?? ""
        #expect(message.contains(dirPath), "names the folder: \(message)")
        switch how {
        case .removed, .movedAway:
            #expect(!FileManager.default.fileExists(atPath: dirPath), "DIR was not made again")
        case .removedAndMadeAgain:
            #expect(Self.contents(dirPath).isEmpty, "nothing written into the new DIR: \(Self.contents(dirPath))")
        case .replacedBySymlink:
            #expect(Self.contents(elsewhere).isEmpty, "nothing written through the link: \(Self.contents(elsewhere))")
        case .stateDirectoryRemoved:
            #expect(!FileManager.default.fileExists(atPath: dirPath + "/.emojiart-sync"), "the state directory was not made again")
            #expect(message.contains("state directory"), "\(message)")
        }
        await gallery.stop()
    }

    /// The real binary, as systemd runs it: DIR moved away, exit status 1 and the folder named on stderr (with
    /// `--quiet`, whose log would otherwise have gone with DIR).
    @Test func theBinaryExits1NamingTheFolderWhenItIsMovedAway() async throws {
        let gallery = try await GalleryFixture(count: 5)
        let parent = TemporaryDirectory("vanish-cli")
        let dirPath = parent.file("emoji")
        let agent = try AgentProcess(["--dir", dirPath, "--server", gallery.baseURL, "-q", "--interval", "3600"], outputDirectory: parent.path)
        defer { agent.signal(SIGKILL) }
        let synced = await eventually { FileManager.default.fileExists(atPath: dirPath + "/gallery_image_5.png") }
        try #require(synced, "\(agent.stderr)")
        #expect(rename(dirPath, parent.file("emoji.old")) == 0)
        let status = await agent.waitForExit(timeout: .seconds(20))
        #expect(status == ExitStatus.fatal.rawValue)
        #expect(agent.stderr.contains(dirPath) && agent.stderr.contains("moved away"), "\(agent.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dirPath))
        await gallery.stop()
    }

    /// The rename gate looks at the state files by path, so DIR moved away reads there as its lock deleted. Before,
    /// the agent then said its state directory was being removed (the binary's test above saw it in one run of
    /// the suite, when a commit looked before the watcher's event came); now it says DIR is no longer there.
    /// Ordered without the watcher: the gate is made to look after the move, before any event is read.
    @Test func aLockMissingBecauseDIRWasMovedAwayIsReportedAsDIRMovedAway() async throws {
        let gallery = try await GalleryFixture(count: 1)
        let parent = TemporaryDirectory("vanish-probe")
        var configuration = try gallery.configuration(dir: parent.file("emoji"))
        configuration.schedule.pollInterval = .seconds(3600)
        let agent = try await SyncAgent(configuration: configuration)
        let background = await BackgroundAgent(agent: agent)
        let gate = agent.core.storage.gate
        gate.startWatching()
        #expect(gate.isOpen, "the gate is open while DIR is where it was")
        #expect(rename(parent.file("emoji"), parent.file("emoji.old")) == 0)
        #expect(!gate.isOpen, "the gate's look finds the lock missing")
        let said = background.failure.map(String.init(describing:)) ?? ""
        #expect(said.contains("moved away") && !said.contains("being removed"), "\(said)")
        await gallery.stop()
    }
}
