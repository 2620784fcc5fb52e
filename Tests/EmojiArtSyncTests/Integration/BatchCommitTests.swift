import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The batch shape of the core: passes visit the silo per batch, new files are committed a batch at a time and
/// survive a kill at any step of a commit, adoption cannot be fooled by a swap during its read.
@Suite(.timeLimit(.minutes(5)))
struct BatchCommitTests {
    /// The bound on silo visits per batch is SiloJobTests' (it counts them in a process of its own); this test
    /// checks what a warm pass answers, across batches: 100 items listed three times are 300 entries, two batches
    /// of `FeedPass.batchSize` (it had 700 items, 2,100 entries, for a visit bound the test no longer checked).
    @Test func aWarmPassAnswersEveryEntryInItsBatchFromDiskOrFromRecord() async throws {
        let gallery = try await GalleryFixture(count: 100, imageSize: .small)
        let dir = TemporaryDirectory("visits")
        let cold = try await gallery.syncOnce(dir: dir.path)
        #expect(cold.entries == 300)
        #expect(cold.entries > FeedPass.batchSize, "one batch only")
        let warm = try await gallery.syncOnce(dir: dir.path)
        await gallery.stop()
        #expect(warm.hits[.disk] == gallery.validNumbers.count)
        #expect(warm.hits[.network, default: 0] == 0)
        // A warm pass answers every entry in its batch's visit, the error items too: their answers with no image
        // are on record, so the batch refuses them (the first listing from the index, the others from memory).
        #expect(warm.failures.count == gallery.errorNumbers.count)
        #expect(warm.failures.allSatisfy { $0.reason.contains("answered at") }, "\(warm.failures.prefix(3))")
    }

    /// A batch's flush overlaps the renames and DIR flush of the batch before it: while the pass's first batch is
    /// held before its DIR flush, the next batch is taken and flushed, and waits flushed for its turn to be put in
    /// place. Before, a lane committed one batch at a time from flush to DIR flush, so a cold pass paid the disk's
    /// wait and the silo's renames one after the other (about 12 of a 13 s cold sync of 100,000 in commits, one
    /// after another: docs/BENCHMARKS.md), and the next batch was never flushed while one was held.
    @Test func theNextBatchIsFlushedWhileTheOneBeforeItIsPutInPlace() async throws {
        // Enough items for several of the pass's groups (`FeedPass.batchSize` listings each): one group's files are
        // published together and may make one batch.
        let gallery = try await GalleryFixture(count: 600, imageSize: .small)
        let dir = TemporaryDirectory("flush-ahead")
        var configuration = try gallery.configuration(dir: dir.path)
        let hooks = AgentTestHooks()
        configuration.testHooks = hooks
        let agent = try await SyncAgent(configuration: configuration)
        defer { agent.shutdown() }
        let committer = agent.core.committer
        let held = Shared(0)
        let flushedAhead = Shared(0)
        hooks.setBeforeBatchEnds { lane in
            guard lane == .pass, held.increment() == 1 else { return }
            _ = await eventually(timeout: .seconds(30)) {
                let ahead = await committer.filesFlushedAhead
                if ahead > 0 { flushedAhead.set(ahead) }
                return ahead > 0
            }
        }
        let report = try await agent.syncOnce()
        await gallery.stop()
        #expect(flushedAhead.value > 0, "no batch was flushed while the first one was held before its DIR flush")
        #expect(report.available == gallery.validNumbers.count)
        for number in gallery.validNumbers { #expect(gallery.isMirrored(number, in: dir)) }
        #expect(await committer.filesFlushedAhead == 0)
        #expect(await committer.files == gallery.validNumbers.count)
    }

    /// 36 files are enough: the first batch is held until 20 wait, so at least 20 are committed together.
    @Test func aColdPassCommitsItsFilesInBatches() async throws {
        let gallery = try await GalleryFixture(count: 40, imageSize: .small)
        let dir = TemporaryDirectory("batches")
        var committer: GroupCommitter?
        var configuration = try gallery.configuration(dir: dir.path)
        let hooks = AgentTestHooks()
        configuration.testHooks = hooks
        let agent = try await SyncAgent(configuration: configuration)
        defer { agent.shutdown() }
        // Batches form from what arrives while one is committed; how many arrive depends on the machine. The
        // first batch is held until 20 files wait, so the test does not depend on how fast the disk is.
        let committerOfAgent = agent.core.committer
        let held = Shared(0)
        hooks.setBeforeCommitBatch { _ in
            guard held.value == 0 else { return }
            held.increment()
            _ = await eventually(timeout: .seconds(30)) { await committerOfAgent.queued >= 20 }
        }
        let report = try await agent.syncOnce()
        committer = agent.core.committer
        await gallery.stop()
        let commits = try #require(committer)
        let files = await commits.files
        let batches = await commits.batches
        #expect(report.available == gallery.validNumbers.count)
        #expect(files == gallery.validNumbers.count)
        #expect(batches < files, "every file was committed alone (\(batches) batches for \(files) files)")
        #expect(await commits.largestBatch >= 20)
    }

    @Test func aFileSwappedInWhileItIsReadForAdoptionIsRefused() async throws {
        let gallery = try await GalleryFixture(count: 9)
        let dir = TemporaryDirectory("adopt-race")
        // The user's copy, identical to the server's: adoptable, until it is swapped during the read.
        try writeBytes(gallery.server.imageBytes(3), to: dir.file("gallery_image_3.png"))
        var other = gallery.server.imageBytes(4)
        other[other.count / 2] ^= 0xFF
        try writeBytes(other, to: dir.file("swap.tmp"))
        let target = dir.file("gallery_image_3.png")
        let swapped = dir.file("swap.tmp")
        let hooks = AgentTestHooks()
        hooks.setAfterAdoptionRead { path in
            if path == target { rename(swapped, target) }
        }
        let report = try await gallery.syncOnce(dir: dir.path) { $0.testHooks = hooks }
        await gallery.stop()

        #expect(report.failures.contains { $0.key.rawValue == "/gallery/image?3" })
        #expect(readBytes(target) == other, "the user's file was changed")
        #expect(try await !indexedFileNames(in: dir.path).contains("gallery_image_3.png"), "a swapped-in file was recorded as the agent's")
        #expect(logLines(dir.path).contains { $0.contains("event=conflict") && $0.contains("gallery_image_3.png") })
    }

    /// Things that appear at asset paths while the files are being fetched (after the check before the fetch,
    /// before the rename) meet the committer's decision: a symbolic link, a hard link to the user's file, a FIFO
    /// and a file of other bytes are each refused and left exactly as they are, and nothing is recorded for them.
    @Test func whatAppearsAtAPathDuringTheFetchIsRefusedAtTheRenameAndLeftAlone() async throws {
        let gallery = try await GalleryFixture(count: 9, imageSize: .small)
        let dir = TemporaryDirectory("commit-obstacles")
        var configuration = try gallery.configuration(dir: dir.path)
        let hooks = AgentTestHooks()
        configuration.testHooks = hooks
        let agent = try await SyncAgent(configuration: configuration)
        defer { agent.shutdown() }
        let committerOfAgent = agent.core.committer
        let valid = gallery.validNumbers.count
        let theirs = Array("someone else's bytes\n".utf8)
        let mine = dir.file("mine.txt")
        try writeBytes(theirs, to: mine)
        try writeBytes(theirs, to: dir.file("elsewhere.txt"))
        let paths = (2...5).map { dir.file("gallery_image_\($0).png") }
        let elsewhere = dir.file("elsewhere.txt")
        let placed = Shared(0)
        // The first batch is held until every valid file waits in it, then the obstacles appear.
        hooks.setBeforeCommitBatch { _ in
            guard placed.value == 0 else { return }
            _ = await eventually(timeout: .seconds(30)) { await committerOfAgent.queued >= valid }
            symlink(elsewhere, paths[0])
            link(mine, paths[1])
            mkfifo(paths[2], 0o644)
            try? writeBytes(theirs, to: paths[3])
            placed.increment()
        }
        let report = try await agent.syncOnce()
        await gallery.stop()

        #expect(placed.value == 1)
        let indexed = try await indexedFileNames(in: dir.path)
        for n in [2, 3, 4, 5] {
            #expect(!indexed.contains("gallery_image_\(n).png"), "image \(n)'s path was recorded as the agent's")
            #expect(report.failures.contains { $0.key.rawValue == "/gallery/image?\(n)" })
            #expect(logLines(dir.path).contains { $0.contains("event=conflict") && $0.contains("gallery_image_\(n).png") })
        }
        var info = stat()
        #expect(lstat(dir.file("gallery_image_2.png"), &info) == 0 && info.st_mode & S_IFMT == S_IFLNK)
        #expect(readBytes(dir.file("elsewhere.txt")) == theirs)
        #expect(lstat(dir.file("gallery_image_3.png"), &info) == 0 && info.st_nlink == 2)
        #expect(readBytes(mine) == theirs)
        #expect(lstat(dir.file("gallery_image_4.png"), &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
        #expect(readBytes(dir.file("gallery_image_5.png")) == theirs)
        for n in gallery.validNumbers where ![2, 3, 4, 5].contains(n) {
            #expect(readBytes(dir.file("gallery_image_\(n).png")) == gallery.server.imageBytes(n))
            #expect(indexed.contains("gallery_image_\(n).png"))
        }
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty, "temporary files left behind")
    }

    /// A `kill -9` at each step of a group commit: the next run finds no partial file, every file the agent
    /// renamed is recorded (or adopted), and the user's file is untouched.
    @Test(arguments: GroupCommitter.Step.allCases)
    func aKillAtAnyStepOfACommitLosesNothingAndLeavesNoPartialFile(_ step: GroupCommitter.Step) async throws {
        let gallery = try await GalleryFixture(count: 40, imageSize: .small)
        let dir = TemporaryDirectory("kill-\(step.rawValue)")
        let output = TemporaryDirectory("kill-output")
        let mine = Array("the user's own notes\n".utf8)
        try writeBytes(mine, to: dir.file("notes.txt"))
        let arguments = ["--dir", dir.path, "--server", gallery.baseURL, "--once", "--quiet", "--retries", "0"]
        let killed = try await AgentProcess.run(
            arguments, outputDirectory: output.path, environment: ["EMOJIART_SYNC_TEST_FAULT": "commit-kill-\(step.rawValue)"])
        #expect(killed.status == SIGKILL, "the fault switch did not stop the run at \(step.rawValue): \(killed.stderr)")

        // Whatever is visible is whole: every PNG in DIR is one the gallery served, byte for byte.
        for name in dir.names() where name.hasSuffix(".png") {
            let n = try #require(Int(name.dropFirst("gallery_image_".count).dropLast(4)))
            #expect(readBytes(dir.file(name)) == gallery.server.imageBytes(n), "\(name) is partial after a kill at \(step.rawValue)")
        }
        let again = try await AgentProcess.run(arguments, outputDirectory: output.path)
        await gallery.stop()
        #expect(again.status == 2, "restart after a kill at \(step.rawValue): \(again.stderr)")  // 2: the error items
        let indexed = try await indexedFileNames(in: dir.path)
        for n in gallery.validNumbers {
            #expect(readBytes(dir.file("gallery_image_\(n).png")) == gallery.server.imageBytes(n))
            #expect(indexed.contains("gallery_image_\(n).png"), "image \(n) is not the agent's after a kill at \(step.rawValue)")
        }
        #expect(readBytes(dir.file("notes.txt")) == mine)
        #expect(!indexed.contains("notes.txt"))
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty, "temporary files left behind")
    }
}
