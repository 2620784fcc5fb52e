import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `rm -rf DIR` during the agent's cold sync removes DIR whole. `rm` opens DIR, lists all of it, and only then
/// deletes what it listed, holding DIR open until its last deletion; a file the agent linked after that listing was
/// never deleted, and `rm` ended with "Directory not empty" (at 100,000 files: 3 runs in 3, 1 to 282 files left).
/// The rename gate now hears of another program's listing (`DirectoryListingMonitor`) and stays shut while that
/// program holds DIR open; a turn of links a listing began during is taken back and linked again later.
@Suite(.timeLimit(.minutes(3)))
struct ListingDuringColdSyncTests {
    /// What `rm -rf DIR` does, begun when the file `start` appears, with a pause between its listing and its
    /// deletions until the file `go` appears: the agent's next turn comes in that pause, every time.
    static func removingScript(in folder: TemporaryDirectory) throws -> String {
        let script = folder.file("remove.sh")
        try """
        while [ ! -e "$2/start" ]; do sleep 0.005; done
        exec 3<"$1"
        ls -f "$1" > "$2/listing"
        : > "$2/listed"
        while [ ! -e "$2/go" ]; do sleep 0.02; done
        cd "$1" || exit 2
        while read -r name; do
            case "$name" in .|..) ;; *) rm -rf -- "$name" || exit 3 ;; esac
        done < "$2/listing"
        cd / && exec 3<&-
        rmdir "$1"
        """.write(toFile: script, atomically: false, encoding: .utf8)
        return script
    }

    /// Waits up to 20 s for `agent` to stop by itself (DIR gone) and returns its exit status; nil when it did not
    /// (it is stopped then).
    static func ownExitStatus(of agent: RunningAgent) async -> EmojiArtSync.ExitStatus? {
        let ended = Mutex<EmojiArtSync.ExitStatus?>(nil)
        let watcher = Task {
            let status = await agent.task.value
            ended.withLock { $0 = status }
        }
        let stopped = await eventually(timeout: .seconds(20)) { ended.withLock { $0 } != nil }
        if !stopped { _ = await agent.stop() }
        _ = await watcher.result
        return stopped ? ended.withLock { $0 } : nil
    }

    /// Makes the file `start` and waits until the script has made `listed`, blocking: it runs in a hook, in the silo,
    /// so that the listing is made before the agent's next step.
    static func startListing(start: String, andWaitFor listed: String) {
        _ = FileManager.default.createFile(atPath: start, contents: nil)
        let deadline = ContinuousClock.now.advanced(by: .seconds(20))
        while !FileManager.default.fileExists(atPath: listed), ContinuousClock.now < deadline { usleep(1000) }
    }

    /// A program that, once the file `start` appears, opens DIR, lists it, says so with the file `listed`, and keeps
    /// DIR open until the file `go` appears.
    static func holdingScript(in folder: TemporaryDirectory) throws -> String {
        let script = folder.file("hold.sh")
        try """
        while [ ! -e "$2/start" ]; do sleep 0.005; done
        exec 3<"$1"
        ls -f "$1" > /dev/null
        : > "$2/listed"
        while [ ! -e "$2/go" ]; do sleep 0.02; done
        """.write(toFile: script, atomically: false, encoding: .utf8)
        return script
    }

    @Test(.enabled(if: Fanotify.works, "fanotify cannot be used here"))
    func rmOfDIRDuringTheColdSyncRemovesItWhole() async throws {
        let gallery = try await GalleryFixture(count: 300, imageSize: .small)
        let parent = TemporaryDirectory("listed")
        let scripts = TemporaryDirectory("listed-script")
        let dirPath = parent.file("emoji")
        var configuration = try gallery.configuration(dir: dirPath)
        configuration.schedule.pollInterval = .seconds(3600)
        // The pause lasts what the test needs: a slow machine never opens the gate under the holder.
        let hooks = AgentTestHooks(listingHoldLimit: .seconds(3600))
        configuration.testHooks = hooks
        let remover = try ChildProcess(executable: "/bin/sh", [try Self.removingScript(in: scripts), dirPath, scripts.path])
        let (start, listed) = (scripts.file("start"), scripts.file("listed"))
        // After the pass's first turn, in the silo: the listing is made before the next turn begins.
        let started = Shared(false)
        hooks.setAfterRenameTurn { lane, _, _ in
            guard lane == .pass, !started.value else { return }
            started.set(true)
            Self.startListing(start: start, andWaitFor: listed)
        }
        let agent = try await RunningAgent(configuration)
        #expect(await eventually(timeout: .seconds(60)) { FileManager.default.fileExists(atPath: listed) })
        let listing = try String(contentsOfFile: scripts.file("listing"), encoding: .utf8)
        let listedFiles = listing.split(separator: "\n").filter { $0.hasPrefix("gallery_image_") }.count
        try #require(listedFiles < gallery.validNumbers.count, "the listing was made after the sync (\(listedFiles) files)")
        // The agent's next turn waits at the gate; before, nothing held it and the sync went on to its end.
        let gate = try #require(hooks.renameGate)
        let synced = { logLines(dirPath).contains { $0.contains("event=poll") } }
        #expect(await eventually(timeout: .seconds(60)) { !gate.isOpen || synced() })
        #expect(!synced(), "the sync ended while another program held DIR open after listing it")
        #expect(FileManager.default.createFile(atPath: scripts.file("go"), contents: nil))
        let status = await remover.waitForExit(timeout: .seconds(60))
        let left = ((try? FileManager.default.contentsOfDirectory(atPath: dirPath)) ?? []).count
        #expect(status == 0, "rm left \(left) names in DIR")
        #expect(!FileManager.default.fileExists(atPath: dirPath), "DIR is still there")
        #expect(await Self.ownExitStatus(of: agent) == .fatal, "exit status 1")
        await gallery.stop()
    }

    /// `rm -rf DIR` while a program polls DIR's listing (`watch ls`, a script counting the files). The poller's
    /// listings, an open and a close each, stop shutting the gate after `ForeignListings.pollerRun`; `rm`'s first look
    /// and its real listing come merged by the kernel into one such record, and were read as the poller's: the
    /// turn's links made after that listing stayed in DIR and `rm` failed with "Directory not empty" (by hand, a
    /// script counting DIR's files every 20 ms: 1 run in 8). Now any open of DIR by another process during a turn
    /// takes the turn's new files back. The remover here is one process, as `rm` is, and deletes once told to.
    @Test(.enabled(if: Fanotify.works && RepositoryFiles.tool("python3") != nil, "needs fanotify and python3"))
    func rmOfDIRWhileAProgramPollsItsListingRemovesItWhole() async throws {
        let gallery = try await GalleryFixture(count: 300, imageSize: .small)
        let parent = TemporaryDirectory("listed-polled")
        let scripts = TemporaryDirectory("listed-polled-script")
        let dirPath = parent.file("emoji")
        #expect(mkdir(dirPath, 0o755) == 0)
        try """
        while [ ! -e "$2/stop" ]; do ls -f "$1" > /dev/null 2>&1; sleep 0.01; done
        """.write(toFile: scripts.file("poll.sh"), atomically: false, encoding: .utf8)
        let poller = try ChildProcess(executable: "/bin/sh", [scripts.file("poll.sh"), dirPath, scripts.path])
        try """
        import os, shutil, sys, time
        folder, scripts = sys.argv[1], sys.argv[2]
        def wait_for(name):
            while not os.path.exists(os.path.join(scripts, name)): time.sleep(0.005)
        wait_for("start")
        os.listdir(folder)                  # rm's first look: open, read, close
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        names = os.listdir(fd)              # its real listing, DIR held open until the end
        open(os.path.join(scripts, "listed"), "w").close()
        wait_for("go")
        for name in names:              # as rm -rf: a name gone meanwhile is no error
            path = os.path.join(folder, name)
            try:
                if os.path.isdir(path) and not os.path.islink(path): shutil.rmtree(path)
                else: os.unlink(name, dir_fd=fd)
            except FileNotFoundError:
                pass
        os.close(fd)
        try:
            os.rmdir(folder)
            result = "removed"
        except OSError as error:
            result = "%s: %d names left" % (error.strerror, len(os.listdir(folder)))
        with open(os.path.join(scripts, "result.tmp"), "w") as out: out.write(result)
        os.rename(os.path.join(scripts, "result.tmp"), os.path.join(scripts, "result"))
        """.write(toFile: scripts.file("remove.py"), atomically: false, encoding: .utf8)
        let python3 = try #require(RepositoryFiles.tool("python3"))
        let remover = try ChildProcess(executable: python3, [scripts.file("remove.py"), dirPath, scripts.path])
        var configuration = try gallery.configuration(dir: dirPath)
        configuration.schedule.pollInterval = .seconds(3600)
        let hooks = AgentTestHooks()
        configuration.testHooks = hooks
        let (start, listed, go, result) = (scripts.file("start"), scripts.file("listed"), scripts.file("go"), scripts.file("result"))
        let listedInBatch = Shared<Int?>(nil)
        // On the I/O thread, after the first link of a batch large enough that more links follow in its turn, once
        // the poller's listings no longer shut the gate: the remover lists DIR there.
        hooks.setAfterRename { lane, batch, batchFiles in
            guard lane == .pass, batchFiles >= 8, listedInBatch.value == nil, let gate = hooks.renameGate else { return }
            let deadline = ContinuousClock.now.advanced(by: .seconds(20))
            while !gate.seesAListingPoller, ContinuousClock.now < deadline { usleep(2000) }
            listedInBatch.set(batch)
            Self.startListing(start: start, andWaitFor: listed)
        }
        // In the silo, after that turn: the remover deletes what it listed and removes DIR, before the next turn.
        hooks.setAfterRenameTurn { lane, batch, _ in
            guard lane == .pass, listedInBatch.value == batch,
                FileManager.default.createFile(atPath: go, contents: nil) else { return }
            let deadline = ContinuousClock.now.advanced(by: .seconds(20))
            while !FileManager.default.fileExists(atPath: result), ContinuousClock.now < deadline { usleep(2000) }
        }
        let agent = try await RunningAgent(configuration)
        #expect(await eventually(timeout: .seconds(60)) { FileManager.default.fileExists(atPath: result) })
        _ = FileManager.default.createFile(atPath: scripts.file("stop"), contents: nil)
        _ = await poller.waitForExit(timeout: .seconds(20))
        _ = await remover.waitForExit(timeout: .seconds(20))
        try #require(listedInBatch.value != nil, "the sync ended before a large batch")
        #expect((try? String(contentsOfFile: result, encoding: .utf8)) == "removed")
        #expect(!FileManager.default.fileExists(atPath: dirPath), "DIR is still there")
        #expect(await Self.ownExitStatus(of: agent) == .fatal, "exit status 1")
        await gallery.stop()
    }

    /// Another program opens and lists DIR right after the agent linked a file, and keeps it open (as `rm` does):
    /// that listing may have begun before the link, so the turn's new files are taken back out of DIR and linked
    /// again once the program has closed DIR. Each ends at its path, recorded as the agent's, and nothing is left in
    /// the state directory's `taken/`.
    @Test(.enabled(if: Fanotify.works, "fanotify cannot be used here"))
    func aTurnAListingBeganDuringIsTakenBackAndLinkedAgain() async throws {
        let gallery = try await GalleryFixture(count: 120, imageSize: .small)
        let dir = TemporaryDirectory("listed-turn")
        let scripts = TemporaryDirectory("listed-turn-script")
        var configuration = try gallery.configuration(dir: dir.path)
        configuration.schedule.pollInterval = .seconds(3600)
        let hooks = AgentTestHooks(listingHoldLimit: .seconds(3600))
        configuration.testHooks = hooks
        let holder = try ChildProcess(executable: "/bin/sh", [try Self.holdingScript(in: scripts), dir.path, scripts.path])
        let (start, listed) = (scripts.file("start"), scripts.file("listed"))
        let started = Shared(false)
        // Between the first two links of the pass: the program opens DIR, lists it and keeps it open.
        hooks.setAfterRename { lane, _, _ in
            guard lane == .pass, !started.value else { return }
            started.set(true)
            Self.startListing(start: start, andWaitFor: listed)
        }
        let agent = try await RunningAgent(configuration)
        let committer = agent.background.agent.core.committer
        let tookBack = await eventually(timeout: .seconds(60)) { await committer.filesTakenBack > 0 }
        let syncedWhileHeld = logLines(dir.path).contains { $0.contains("event=poll") }
        #expect(FileManager.default.createFile(atPath: scripts.file("go"), contents: nil))
        #expect(await holder.waitForExit(timeout: .seconds(20)) == 0)
        #expect(tookBack, "no file was taken back after the listing")
        #expect(!syncedWhileHeld, "the sync went on while another program held DIR open after listing it")
        #expect(await eventually(timeout: .seconds(60)) { logLines(dir.path).contains { $0.contains("event=poll") } })
        #expect(await agent.stop() == .success)
        await gallery.stop()
        for number in gallery.validNumbers { #expect(gallery.isMirrored(number, in: dir)) }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        #expect(!names.contains { $0.contains(".conflict-") }, "\(names.filter { $0.contains(".conflict-") })")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: dir.path + "/.emojiart-sync/taken")) ?? []).isEmpty)
        let status = try AgentStatus.read(from: dir.path + "/.emojiart-sync/status.json")
        #expect(status.assets.ok == gallery.validNumbers.count)
    }

    /// A program that lists DIR over and over while the agent syncs (`watch ls`, a script counting the files, a
    /// file manager) never holds the sync back for good. Before, each listing shut the gate for 50 ms, and a
    /// benchmark listing DIR every 10 ms kept the agent's cold sync from writing a single file for 13 minutes.
    @Test(.enabled(if: Fanotify.works, "fanotify cannot be used here"))
    func aProgramListingDIROverAndOverNeverStopsTheSync() async throws {
        let gallery = try await GalleryFixture(count: 300, imageSize: .small)
        let dir = TemporaryDirectory("listed-often")
        let scripts = TemporaryDirectory("listed-often-script")
        let poller = scripts.file("poll.sh")
        try """
        while [ ! -e "$2/stop" ]; do ls -f "$1" > /dev/null; done
        """.write(toFile: poller, atomically: false, encoding: .utf8)
        let listing = try ChildProcess(executable: "/bin/sh", [poller, dir.path, scripts.path])
        var configuration = try gallery.configuration(dir: dir.path)
        configuration.schedule.pollInterval = .seconds(3600)
        let agent = try await RunningAgent(configuration)
        let synced = await eventually(timeout: .seconds(90)) { logLines(dir.path).contains { $0.contains("event=poll") } }
        #expect(FileManager.default.createFile(atPath: scripts.file("stop"), contents: nil))
        _ = await listing.waitForExit(timeout: .seconds(20))
        #expect(synced, "the sync did not end while DIR was listed over and over: \(dir.names().count - 1) files")
        #expect(await agent.stop() == .success)
        await gallery.stop()
        for number in gallery.validNumbers { #expect(gallery.isMirrored(number, in: dir)) }
    }
}

extension ListingDuringColdSyncTests {
    /// Where fanotify cannot serve (a kernel older than 5.13 without `CAP_SYS_ADMIN`, a file system without file
    /// handles; here the test fault `fanotify-eperm`), the agent says so once in its log and syncs as before.
    @Test func withoutFanotifyTheAgentSaysSoAndSyncs() async throws {
        let gallery = try await GalleryFixture(count: 5)
        let parent = TemporaryDirectory("no-fanotify")
        let dirPath = parent.file("emoji")
        let agent = try AgentProcess(
            ["--dir", dirPath, "--server", gallery.baseURL, "-q", "--interval", "3600"], outputDirectory: parent.path,
            environment: ["EMOJIART_SYNC_TEST_FAULT": "fanotify-eperm"])
        defer { agent.signal(SIGKILL) }
        let said = await eventually {
            logLines(dirPath).contains { $0.contains("event=watch") && $0.contains("result=no-listing-monitor") }
                && gallery.validNumbers.allSatisfy { FileManager.default.fileExists(atPath: dirPath + "/gallery_image_\($0).png") }
        }
        #expect(said, "\(logLines(dirPath).suffix(5))")
        agent.signal(SIGTERM)
        #expect(await agent.waitForExit(timeout: .seconds(20)) == 0)
        let notices = logLines(dirPath).filter { $0.contains("result=no-listing-monitor") }
        #expect(notices.count == 1 && notices[0].contains("Operation not permitted"), "\(notices)")
        await gallery.stop()
    }
}
