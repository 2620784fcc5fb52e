import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Ownership by file identity (device, inode): a file at an asset path that is not the file the agent wrote is
/// not the agent's, whatever its name. A person's file moved onto an asset path is kept (moved aside), a file
/// swapped in while the agent removes one is put back, and a failed `lstat` decides nothing.
@Suite(.timeLimit(.minutes(2)))
struct IdentityOwnershipTests {
    static let mine: [UInt8] = Array("a person's own bytes, not the gallery's\n".utf8)

    /// The conflict copies of `name` (`gallery_image_5.conflict-....png`) in `dir`.
    static func conflictCopies(of name: String, in dir: TemporaryDirectory) -> [String] {
        let stem = String(name.dropLast(".png".count)) + ".conflict-"
        return ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { $0.hasPrefix(stem) }.sorted()
    }

    /// The identity of the file at `path`, with its birth time (`statx`), nil when nothing is there.
    static func identity(_ path: String) -> FileIdentity? {
        (try? FileStatus.at(path))??.identity
    }

    /// An agent in this process on `dir` with `hooks`, after one complete pass.
    static func agentAfterOnePass(_ gallery: GalleryFixture, dir: TemporaryDirectory, hooks: AgentTestHooks) async throws -> SyncAgent {
        var configuration = try gallery.configuration(dir: dir.path)
        configuration.testHooks = hooks
        let agent = try await SyncAgent(configuration: configuration)
        #expect(try await agent.syncOnce().isComplete)
        return agent
    }

    @Test func aPersonsFileMovedOntoAnAssetPathKeepsItsBytesThroughTheRepairSIGHUPAndADiskPurge() async throws {
        let gallery = try await GalleryFixture(count: 5, imageSize: .small)
        let dir = TemporaryDirectory("moved-onto")
        let agent = try await gallery.startAgent(dir: dir)
        try writeBytes(Self.mine, to: dir.file("mine.png"))
        #expect(rename(dir.file("mine.png"), dir.file("gallery_image_5.png")) == 0)  // `mv mine.png gallery_image_5.png`

        // The repair: the asset is back at its name, the person's file beside it, reported.
        #expect(await eventually { gallery.isMirrored(5, in: dir) && Self.conflictCopies(of: "gallery_image_5.png", in: dir).count == 1 })
        let copies = Self.conflictCopies(of: "gallery_image_5.png", in: dir)
        let copy = try #require(copies.first)
        #expect(readBytes(dir.file(copy)) == Self.mine)
        #expect(await eventually { logLines(dir.path).contains { $0.contains("event=conflict") && $0.contains("moved_to=\(dir.file(copy))") } })
        let status = await agent.keeper.status(base: AgentStatus(pid: 1, startedAt: Date(), directory: dir.path, server: ""))
        #expect(status.lastMovedAside?.file == "gallery_image_5.png" && status.lastMovedAside?.movedTo == copy)
        #expect(status.humanReadable().contains("kept as \(copy)"))

        // SIGHUP: a full pass and a rescan leave the copy alone.
        let pass = await agent.keeper.reload()
        await agent.keeper.waitForPass(pass)
        #expect(Self.conflictCopies(of: "gallery_image_5.png", in: dir) == copies)
        #expect(readBytes(dir.file(copy)) == Self.mine)

        // A disk purge removes the agent's files only, and fetches them again.
        _ = await agent.keeper.purgeDisk()
        #expect(await eventually { gallery.validNumbers.allSatisfy { gallery.isMirrored($0, in: dir) } })
        #expect(readBytes(dir.file(copy)) == Self.mine)
        #expect(Self.conflictCopies(of: "gallery_image_5.png", in: dir) == copies)
        #expect(await agent.stop() == .success)
        await gallery.stop()
    }

    /// A disk purge of hundreds of files takes them a page at a time (`OwnedFiles.pages(of:)`): one look and one
    /// unlink job off the silo and two transactions a page (the files taken, then their rows forgotten), counted by
    /// SQLite's commit hook (one transaction a file before: a purge of 90,000 took 51 s), and every file of the
    /// agent's is gone with its row, the person's file among them kept.
    @Test func aDiskPurgeRemovesTheAgentsFilesAPageAtATime() async throws {
        let gallery = try await GalleryFixture(count: 300, imageSize: .small)
        let dir = TemporaryDirectory("purge-pages")
        let agent = try await SyncAgent(configuration: try gallery.configuration(dir: dir.path))
        defer { agent.shutdown() }
        #expect(try await agent.syncOnce().isComplete == false, "the gallery's error items fail")
        let valid = gallery.validNumbers
        try writeBytes(Self.mine, to: dir.file("mine.png"))
        #expect(rename(dir.file("mine.png"), dir.file("gallery_image_\(valid[140]).png")) == 0)

        let index = agent.core.index
        let commitsBefore = await index.commits
        let removed = try await agent.core.owned.clear()
        let commits = await index.commits - commitsBefore
        let pages = (valid.count + OwnedFiles.removalPage - 1) / OwnedFiles.removalPage
        #expect(removed.files == valid.count - 1, "the agent's own files, not the person's")
        #expect(commits <= 2 * pages + 1, "\(commits) transactions for \(pages) pages")
        #expect(await index.count == 1, "the person's path keeps its row, for the fetch that follows")
        #expect(readBytes(dir.file("gallery_image_\(valid[140]).png")) == Self.mine)
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".png") }
        #expect(left == ["gallery_image_\(valid[140]).png"], "\(left.count) files left")
        await gallery.stop()
    }

    /// A removal's takes and unlinks run off the silo: a job queued on the silo while the purge takes a file runs
    /// before that take ends (the hook holds the taking thread until the job has run, or 20 s). Before, a page's
    /// files were taken inside a turn of the silo, so the job could only run once the page was taken, and the hook
    /// waited in vain. The purge still removes every file of the agent's.
    @Test func aDiskPurgeTakesItsFilesOffTheSilo() async throws {
        let gallery = try await GalleryFixture(count: 40, imageSize: .small)
        let dir = TemporaryDirectory("purge-off-silo")
        var configuration = try gallery.configuration(dir: dir.path)
        let hooks = AgentTestHooks()
        configuration.testHooks = hooks
        let agent = try await SyncAgent(configuration: configuration)
        defer { agent.shutdown() }
        _ = try await agent.syncOnce()
        let probed = Shared(false)
        let ranDuringTake = Shared(false)
        hooks.setBeforeTaking { _ in
            guard !probed.value else { return }
            probed.set(true)
            ranDuringTake.set(siloRunsAJobMeanwhile())
        }
        let removed = try await agent.core.owned.clear()
        await gallery.stop()
        #expect(probed.value, "no file was taken")
        #expect(ranDuringTake.value, "a silo job waited for the purge's take to end")
        #expect(removed.files == gallery.validNumbers.count)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".png") }.isEmpty)
    }

    /// The file system gives a new file the inode number of one deleted a moment before (ext4 does, at once), so a
    /// person's own file written where the agent's was deleted while no agent ran had the agent's identity by device
    /// and inode, and the next run's repair replaced the person's bytes. The inode's birth time tells the two apart:
    /// the person's file is kept beside the asset, as any file that is not the agent's.
    @Test func aPersonsFileGivenTheDeletedAssetsInodeNumberIsKept() async throws {
        let gallery = try await GalleryFixture(count: 5, imageSize: .small)
        let out = TemporaryDirectory("inode-reuse-out")
        let dir = TemporaryDirectory("inode-reuse")
        let once = ["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q"]
        let name = "gallery_image_3.png"
        let path = dir.file(name)
        // `rm gallery_image_3.png`, then one's own files beside it until the file system gives one of them the freed
        // inode number (ext4 does at once, unless a process running beside the test took it first: then the agent
        // writes the asset again and the test tries again), and `mv` that one onto the asset's name.
        var reused = false
        for round in 0..<5 where !reused {
            let run = try await AgentProcess.run(once, outputDirectory: out.path)
            #expect(run.status == 0, "\(run.stderr)")
            let agents = try #require(Self.identity(path))
            #expect(unlink(path) == 0)
            for attempt in 0..<64 where !reused {
                let mine = dir.file("mine-\(round)-\(attempt).txt")
                try writeBytes(Self.mine, to: mine)
                let identity = try #require(Self.identity(mine))
                guard identity.device == agents.device, identity.inode == agents.inode else { continue }
                #expect(rename(mine, path) == 0)
                reused = true
            }
        }
        try #require(reused, "the file system never gave the deleted file's inode number to a new file")

        let second = try await AgentProcess.run(once, outputDirectory: out.path)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(gallery.isMirrored(3, in: dir), "the asset is back at its name")
        let copies = Self.conflictCopies(of: name, in: dir)
        #expect(copies.count == 1, "\(copies)")
        #expect(copies.first.map { readBytes(dir.file($0)) } == Self.mine, "the person's bytes are gone")
        await gallery.stop()
    }

    /// A person's file that sits at an asset path while a disk purge runs (no watcher here to repair it first):
    /// the purge leaves it, and the fetch after it moves it aside as a repair would.
    @Test func aDiskPurgeLeavesAPersonsFileAtAnAssetPathAndTheNextStoreMovesItAside() async throws {
        let gallery = try await GalleryFixture(count: 3, imageSize: .small)
        let dir = TemporaryDirectory("purge-foreign")
        let agent = try await SyncAgent(configuration: try gallery.configuration(dir: dir.path))
        defer { agent.shutdown() }
        #expect(try await agent.syncOnce().isComplete)
        try writeBytes(Self.mine, to: dir.file("mine.png"))
        #expect(rename(dir.file("mine.png"), dir.file("gallery_image_2.png")) == 0)

        let removed = try await agent.core.owned.clear()
        _ = await agent.core.memory.purge()  // as `SIGUSR2` does
        #expect(removed.files == 2, "the agent's own two files, not the person's")
        #expect(readBytes(dir.file("gallery_image_2.png")) == Self.mine)
        #expect(!FileManager.default.fileExists(atPath: dir.file("gallery_image_1.png")))

        let second = try await agent.syncOnce()
        #expect(second.isComplete, "\(second.failures)")
        #expect(gallery.validNumbers.allSatisfy { gallery.isMirrored($0, in: dir) })
        let copies = Self.conflictCopies(of: "gallery_image_2.png", in: dir)
        #expect(copies.count == 1 && copies.first.map { readBytes(dir.file($0)) } == Self.mine)
        await gallery.stop()
    }

    @Test func anAgentsFileRenamedAwayIsRestoredAndTheRenamedCopyLeftAlone() async throws {
        let gallery = try await GalleryFixture(count: 4, imageSize: .small)
        let dir = TemporaryDirectory("renamed-away")
        let agent = try await gallery.startAgent(dir: dir)
        let before = Self.identity(dir.file("gallery_image_3.png"))
        #expect(rename(dir.file("gallery_image_3.png"), dir.file("my-favourite.png")) == 0)
        #expect(await eventually { gallery.isMirrored(3, in: dir) })
        let pass = await agent.keeper.reload()
        await agent.keeper.waitForPass(pass)
        _ = await agent.keeper.purgeDisk()
        #expect(await eventually { gallery.validNumbers.allSatisfy { gallery.isMirrored($0, in: dir) } })
        #expect(readBytes(dir.file("my-favourite.png")) == gallery.server.imageBytes(3))
        #expect(Self.identity(dir.file("my-favourite.png")) == before, "the renamed copy is the very file, untouched")
        #expect(await agent.stop() == .success)
        await gallery.stop()
    }

    /// The race a removal used to lose: decided (the file is the agent's and intact), then a person's file is
    /// swapped in, then the removal. The swapped-in file survives, at its name.
    @Test func aFileSwappedInBetweenTheCheckAndTheRemovalSurvives() async throws {
        let gallery = try await GalleryFixture(count: 3, imageSize: .small)
        let dir = TemporaryDirectory("removal-race")
        let hooks = AgentTestHooks()
        let agent = try await Self.agentAfterOnePass(gallery, dir: dir, hooks: hooks)
        defer { agent.shutdown() }
        let victim = dir.file("gallery_image_2.png")
        let swap = dir.file("swap.tmp")
        hooks.setBeforeTaking { path in
            guard path == victim else { return }
            try? writeBytes(Self.mine, to: swap)
            rename(swap, victim)
        }
        let key = try AssetKey(feedURL: "/gallery/image?2")
        let removed = try await agent.core.owned.remove(key)
        #expect(removed == 0)
        #expect(readBytes(victim) == Self.mine, "the swapped-in file was removed")
        #expect(try await agent.core.owned.key(forFileNamed: "gallery_image_2.png") == nil, "the path is not the agent's any more")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: dir.path + "/.emojiart-sync/taken")) ?? ["?"]).isEmpty)
        await gallery.stop()
    }

    /// A removal unlinks the files it took off the silo, then forgets their rows in another turn. A fetch that put
    /// a new file at the emptied path in between (a repair, an access) keeps it and its row: the row is forgotten
    /// only where it still records the file that was unlinked.
    @Test func aFileStoredWhileARemovalUnlinksKeepsItsRow() async throws {
        let gallery = try await GalleryFixture(count: 3, imageSize: .small)
        let dir = TemporaryDirectory("removal-refetch")
        let hooks = AgentTestHooks()
        let agent = try await Self.agentAfterOnePass(gallery, dir: dir, hooks: hooks)
        defer { agent.shutdown() }
        let key = try AssetKey(feedURL: "/gallery/image?2")
        let path = dir.file("gallery_image_2.png")
        let core = agent.core
        hooks.setBeforeForgettingRemoved {
            #expect(Self.identity(path) == nil, "the file was not taken")
            _ = try? await core.pipeline.refetch(key)
        }
        #expect(try await core.owned.remove(key) > 0)
        // The file system may give the new file the unlinked one's inode: identity alone cannot tell them apart.
        let stored = try #require(Self.identity(path), "the file stored meanwhile is gone")
        #expect(gallery.isMirrored(2, in: dir))
        let row = try #require(try await core.index.entry(for: key), "the row of the file stored meanwhile was forgotten")
        #expect(row.identity == stored)
        await gallery.stop()
    }

    /// `lstat` of one file fails with `EACCES` (root ignores permissions, so the agent's own status call is made
    /// to fail): its check is an error, the file keeps its row, nothing is repaired, released or reported as a
    /// conflict; once `lstat` works again the same file is found intact.
    @Test func aFailingLstatLeavesOwnershipAndTheDecisionUnchanged() async throws {
        let gallery = try await GalleryFixture(count: 3, imageSize: .small)
        let dir = TemporaryDirectory("lstat-eacces")
        let hooks = AgentTestHooks()
        let agent = try await gallery.startAgent(dir: dir) { $0.testHooks = hooks }
        let keeper = agent.keeper
        let name = "gallery_image_3.png"
        let path = dir.file(name)
        let before = Self.identity(path)
        hooks.failStatus(of: path, with: EACCES)
        // Its fingerprint changes (a touch), so a look cannot trust it without reading its status.
        #expect(utimes(path, nil) == 0)
        await keeper.repairs.noteChanged(fileNames: [name])
        await keeper.repairs.checkPending(urgentOnly: true)
        // The watcher may have seen the touch first: then its check loop has the file, this call returns at once
        // (`RepairQueue.checkPending` runs one loop at a time), and the error comes when that loop's look ends.
        _ = await eventually { await keeper.lastError != nil }
        let error = await keeper.lastError ?? "no error"
        #expect(error.contains("Permission denied") && error.contains(name), "\(error)")
        // A full pass accesses it too: an error, not a repair.
        let pass = await keeper.reload()
        await keeper.waitForPass(pass)
        let core = agent.background.agent.core
        #expect(try await core.owned.key(forFileNamed: name) != nil, "the file lost its row")
        let lines = logLines(dir.path)
        #expect(!lines.contains { ($0.contains("event=repair") || $0.contains("event=conflict")) && $0.contains("key=/gallery/image?3") })

        hooks.failStatus(of: path, with: nil)
        #expect(try await core.inspector.check(fileNamed: name) == .intact)
        #expect(Self.identity(path) == before)
        #expect(!logLines(dir.path).contains { $0.contains("event=repair") || $0.contains("event=conflict") })
        #expect(await agent.stop() == .success)
        await gallery.stop()
    }

    /// A crash while a file is held in `taken/` (between a removal's taking and its verdict) loses nothing: the
    /// next start hands it back to DIR, at its name if that is free, beside it otherwise. Never unlinked.
    @Test func aFileACrashLeftHeldIsHandedBackAtTheNextStart() async throws {
        let gallery = try await GalleryFixture(count: 3, imageSize: .small)
        let dir = TemporaryDirectory("held-after-crash")
        let directory = SyncDirectory(dir.path)
        try directory.prepare()
        try writeBytes(Self.mine, to: directory.takenDirectory + "/gallery_image_9.png~4242-1")
        try writeBytes(Self.mine, to: directory.takenDirectory + "/gallery_image_2.png~4242-2")
        try writeBytes(gallery.server.imageBytes(2), to: dir.file("gallery_image_2.png"))

        let agent = try await SyncAgent(configuration: try gallery.configuration(dir: dir.path))
        agent.shutdown()
        #expect(readBytes(dir.file("gallery_image_9.png")) == Self.mine)
        let copies = Self.conflictCopies(of: "gallery_image_2.png", in: dir)
        #expect(copies.count == 1 && copies.first.map { readBytes(dir.file($0)) } == Self.mine)
        #expect(readBytes(dir.file("gallery_image_2.png")) == gallery.server.imageBytes(2))
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: directory.takenDirectory)) ?? ["?"]).isEmpty)
        await gallery.stop()
    }

    /// A failed `fsync` of DIR is an error: the repair it was to make durable is not reported done (no
    /// `hit=network` line; the access fails naming the error).
    @Test func aFailedDirectoryFlushIsAnErrorNotADurableRepair() async throws {
        let gallery = try await GalleryFixture(count: 3, imageSize: .small)
        let dir = TemporaryDirectory("fsync-eio")
        let hooks = AgentTestHooks()
        var configuration = try gallery.configuration(dir: dir.path)
        configuration.testHooks = hooks
        let agent = try await SyncAgent(configuration: configuration)
        defer { agent.shutdown() }
        #expect(try await agent.syncOnce().isComplete)
        let key = try AssetKey(feedURL: "/gallery/image?1")
        unlink(dir.file("gallery_image_1.png"))
        hooks.failDirectoryFlush(with: EIO)
        await #expect(throws: SyncError.self) { _ = try await agent.core.pipeline.refetch(key, reason: .missing) }
        let repairLines = { logLines(dir.path).filter { $0.contains("key=/gallery/image?1") && $0.contains("hit=network") } }
        #expect(repairLines().count == 1, "only the first sync's line: the failed repair was reported done")
        #expect(logLines(dir.path).contains { $0.contains("key=/gallery/image?1") && $0.contains("Input/output error") })

        // The file was renamed and recorded, only not flushed: once flushes work, the next look finds it intact
        // and a flush makes it durable.
        hooks.failDirectoryFlush(with: nil)
        _ = try await agent.core.pipeline.refetch(key, reason: .missing)
        try await agent.core.owned.makeDurable()
        #expect(gallery.isMirrored(1, in: dir))
        await gallery.stop()
    }
}
