import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A person's deletion during the agent's own cold sync is repaired while that sync still runs: the agent's own
/// renames into DIR (thousands of `IN_MOVED_TO`) never hold a repair back. Before, they kept the watcher's quiet
/// period from ever starting, and the deletion waited for the sync to end or for the 5 s cap (on a machine where
/// the sync outlasts that cap this test cannot tell the two apart: `RenameGateTests` pins the rule itself).
@Suite(.timeLimit(.minutes(3)))
struct ColdSyncRepairTests {
    @Test func aDeletionDuringTheAgentsOwnColdSyncIsRepairedBeforeTheSyncEnds() async throws {
        let gallery = try await GalleryFixture(count: 200, imageSize: .small)
        let dir = TemporaryDirectory("cold-repair")
        var configuration = try gallery.configuration(dir: dir.path)
        configuration.schedule.pollInterval = .seconds(3600)
        let agent = try await RunningAgent(configuration)
        // The first file the sync stores (a file committed alone, as the first one is) is deleted at once.
        var first: String?
        #expect(await eventually {
            first = ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).first { $0.hasPrefix("gallery_image_") }
            return first != nil
        })
        let name = try #require(first)
        unlink(dir.file(name))
        let stored = ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).count - 1
        try #require(stored < gallery.validNumbers.count / 2, "the cold sync was nearly over when the file was deleted (\(stored) files)")

        #expect(await eventually(timeout: .seconds(60)) { logLines(dir.path).contains { $0.contains("event=poll") } })
        #expect(await agent.stop() == .success)
        await gallery.stop()
        let number = try #require(Int(name.dropFirst("gallery_image_".count).dropLast(".png".count)))
        #expect(gallery.isMirrored(number, in: dir))
        let lines = logLines(dir.path)
        let key = "key=/gallery/image?\(number)"
        let fetches = lines.indices.filter {
            lines[$0].contains("event=asset") && lines[$0].contains("hit=network") && lines[$0].split(separator: " ").contains(Substring(key))
        }
        let repaired = try #require(fetches.dropFirst().first, "no second hit=network line for the deleted file")
        let syncEnded = try #require(lines.firstIndex { $0.contains("event=poll") })
        #expect(repaired < syncEnded, "the repair landed after the cold sync ended")
        // Ordered by events: the cold sync was still storing files after the repair landed.
        let laterColdFetches = lines[repaired..<syncEnded].filter { $0.contains("event=asset") && $0.contains("hit=network") }
        #expect(!laterColdFetches.isEmpty, "the repair waited for the cold sync's last file")
    }

    /// A repair is committed in a lane of its own (`GroupCommitter.Lane.repair`): while the cold sync's batch is
    /// held before its commit (the stand-in for a batch of thousands of files and its `syncfs`), the person's
    /// deleted file comes back anyway. Before, it joined the pass's next batch and waited for the held one.
    @Test func aRepairIsCommittedWhileThePassesBatchIsStillBeingCommitted() async throws {
        let gallery = try await GalleryFixture(count: 200, imageSize: .small)
        let dir = TemporaryDirectory("repair-lane")
        var configuration = try gallery.configuration(dir: dir.path)
        let held = HeldSecondPassBatch(&configuration)
        let (holding, released) = (held.holding, held.released)
        // The priority the repair's commit runs at: the watcher's work goes ahead of the pass's in the silo's queue.
        let repairPriority = Shared<TaskPriority?>(nil)
        held.hooks.setAfterRenameTurn { lane, _, _ in
            if lane == .repair, repairPriority.value == nil { repairPriority.set(Task.currentPriority) }
        }
        let agent = try await RunningAgent(configuration)
        #expect(await eventually { holding.value })
        let stored = ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { $0.hasPrefix("gallery_image_") }
        let name = try #require(stored.first, "no file was committed before the held batch")
        let number = try #require(Int(name.dropFirst("gallery_image_".count).dropLast(".png".count)))
        unlink(dir.file(name))
        let repairedWhileHeld = await eventually(timeout: .seconds(20)) { gallery.isMirrored(number, in: dir) }
        let stillHeld = holding.value
        released.set(true)
        #expect(repairedWhileHeld && stillHeld, "the repair waited for the pass's batch")
        // The hook runs after the turn's renames: the file can be seen a moment before it has run.
        #expect(await eventually { repairPriority.value != nil }, "no repair turn was seen")
        #expect(repairPriority.value == .high, "the repair was committed at \(repairPriority.value.map { "\($0.rawValue)" } ?? "no priority")")

        #expect(await eventually(timeout: .seconds(60)) { logLines(dir.path).contains { $0.contains("event=poll") } })
        #expect(await agent.stop() == .success)
        await gallery.stop()
        for number in gallery.validNumbers { #expect(gallery.isMirrored(number, in: dir)) }
        #expect(logLines(dir.path).contains { $0.contains("event=repair") && $0.contains("key=/gallery/image?\(number)") })
    }

    /// A batch larger than `GroupCommitter.renamesPerTurn` is linked and recorded a turn at a time, and its links
    /// happen off the silo: a job queued on the silo while a turn's files are being linked runs before that turn's
    /// links end (the hook holds the linking thread until the job has run, or 20 s). Before, the renames of a turn
    /// ran inside a turn of the silo, so the job could only run once they were all done and the hook waited in
    /// vain. The large batch is the one after the held one: the transfers of the group whose task was held went on
    /// meanwhile, and its task commits all that finished at once (`AccessPipeline.fetchGroup`).
    @Test func aLargeBatchIsLinkedOffTheSiloATurnAtATime() async throws {
        let (gallery, dir, configuration, held) = try await HeldSecondPassBatch.largeBatch("rename-turns")
        let hooks = held.hooks
        /// Per pass batch: the files of each of its turns.
        let turnsByBatch = Shared<[Int: [Int]]>([:])
        /// Whether a silo job queued during the first link of the first batch of more than a turn ran before that link's turn ended.
        let probed = Shared(false)
        let ranDuringLinks = Shared(false)
        hooks.setAfterRename { lane, _, batchFiles in
            guard lane == .pass, batchFiles > GroupCommitter.renamesPerTurn, !probed.value else { return }
            probed.set(true)
            ranDuringLinks.set(siloRunsAJobMeanwhile())
        }
        hooks.setAfterRenameTurn { lane, batch, files in
            guard lane == .pass else { return }
            var turns = turnsByBatch.value
            turns[batch, default: []].append(files)
            turnsByBatch.set(turns)
        }
        let agent = try await RunningAgent(configuration)
        #expect(await eventually { held.holding.value })
        #expect(await held.releaseOnceServed())

        #expect(await eventually(timeout: .seconds(60)) { logLines(dir.path).contains { $0.contains("event=poll") } })
        #expect(await agent.stop() == .success)
        await gallery.stop()
        let turns = try #require(turnsByBatch.value.values.max { $0.reduce(0, +) < $1.reduce(0, +) })
        #expect(turns.reduce(0, +) > GroupCommitter.renamesPerTurn, "the largest batch had \(turns.reduce(0, +)) files")
        #expect(turns.allSatisfy { $0 <= GroupCommitter.renamesPerTurn }, "turns of \(turns) files")
        #expect(probed.value, "no batch of more than one turn was linked")
        #expect(ranDuringLinks.value, "a silo job waited for a turn's links to end")
        for number in gallery.validNumbers { #expect(gallery.isMirrored(number, in: dir)) }
    }
}

extension ColdSyncRepairTests {
    /// A turn of the committer stops renaming at the first deletion the gate hears of (`rm -rf DIR` has begun: what
    /// `rm` listed before it must be all there is), and the rest of the batch waits at the gate. Before, the turn
    /// renamed all its 64 files: a user's `rm -rf DIR` during the cold sync failed with "Directory not empty" and
    /// left up to a turn of files behind. The gate is shut by the test after the tenth rename, as a deletion would.
    @Test func aTurnStopsRenamingAtTheFirstDeletionSeen() async throws {
        // A held batch; a batch after it holds many files (see `aLargeBatchIsLinkedOffTheSiloATurnAtATime`:
        // which one depends on when the transfers end), whose first turn is a full one of `renamesPerTurn` unless it
        // is cut. The gate is shut at the tenth rename of the first batch of more than ten files: a batch of exactly
        // ten would end its turn there anyway, and its cut would show nothing.
        let (gallery, dir, configuration, held) = try await HeldSecondPassBatch.largeBatch("turn-cut")
        let hooks = held.hooks
        let renamedByBatch = Shared<[Int: Int]>([:])
        let cutBatch = Shared(0)
        let cutBatchFiles = Shared(0)
        let turns = Shared<[Int]>([])
        hooks.setAfterRename { lane, batch, batchFiles in
            guard lane == .pass, batchFiles > 10 else { return }
            var renamed = renamedByBatch.value
            renamed[batch, default: 0] += 1
            renamedByBatch.set(renamed)
            if cutBatch.value == 0, renamed[batch] == 10 {
                cutBatch.set(batch)
                cutBatchFiles.set(batchFiles)
                hooks.renameGate?.holdShut(true)
            }
        }
        hooks.setAfterRenameTurn { lane, batch, files in
            if lane == .pass, cutBatch.value != 0, batch == cutBatch.value { turns.append(files) }
        }
        let agent = try await RunningAgent(configuration)
        #expect(await held.releaseOnceServed())
        #expect(await eventually(timeout: .seconds(60)) { !turns.value.isEmpty })
        #expect(turns.value == [10], "turns of \(turns.value) files")
        hooks.renameGate?.holdShut(false)
        #expect(await eventually(timeout: .seconds(60)) { gallery.validNumbers.allSatisfy { gallery.isMirrored($0, in: dir) } })
        #expect(await agent.stop() == .success)
        await gallery.stop()
        // The rest of the cut batch went in once the gate opened.
        #expect(renamedByBatch.value[cutBatch.value] == cutBatchFiles.value, "the cut batch renamed \(renamedByBatch.value[cutBatch.value] ?? 0) of \(cutBatchFiles.value) files")
    }

    /// A person deletes a file the cold sync has just renamed into DIR, before its load has ended (DIR not yet
    /// flushed): the repair the watcher starts joins that load in flight, which ends "done". Before, the repair
    /// took that for its answer and the file stayed missing until the next rescan (after the sync); now it looks
    /// at the file again after the join and repairs it for real.
    @Test func aFileDeletedBeforeItsLoadEndedIsRepairedNotTakenAsDone() async throws {
        let gallery = try await GalleryFixture(count: 200, imageSize: .small)
        let dir = TemporaryDirectory("joined-repair")
        var configuration = try gallery.configuration(dir: dir.path)
        configuration.schedule.pollInterval = .seconds(3600)
        let hooks = AgentTestHooks()
        configuration.testHooks = hooks
        let memory = Shared<ImageLoader?>(nil)
        let deleted = Shared<String?>(nil)
        let joined = Shared(false)
        let root = dir.path
        // The pass's first batch (its first file, alone) is renamed and recorded; before DIR is flushed and its
        // load ends, the file is deleted, and the flush waits until the watcher's repair has joined that load.
        hooks.setBeforeBatchEnds { lane in
            guard lane == .pass, deleted.value == nil,
                let name = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).first(where: { $0.hasPrefix("gallery_image_") }),
                let loader = memory.value
            else { return }
            let joinsBefore = await loader.joins
            unlink(root + "/" + name)
            deleted.set(name)
            joined.set(await eventually(timeout: .seconds(20)) { await loader.joins > joinsBefore })
        }
        let agent = try await RunningAgent(configuration)
        memory.set(agent.background.agent.core.memory)
        #expect(await eventually(timeout: .seconds(60)) { logLines(dir.path).contains { $0.contains("event=poll") } })
        #expect(await agent.stop() == .success)
        await gallery.stop()
        let name = try #require(deleted.value, "no file was deleted before its load ended")
        #expect(joined.value, "the repair did not join the load in flight")
        let number = try #require(Int(name.dropFirst("gallery_image_".count).dropLast(".png".count)))
        let lines = logLines(dir.path)
        let syncEnded = try #require(lines.firstIndex { $0.contains("event=poll") })
        let repaired = try #require(
            lines.firstIndex { $0.contains("event=repair") && $0.contains("key=/gallery/image?\(number) ") },
            "the deleted file was never repaired")
        // Repaired while the cold sync was still fetching, not by the rescan that follows the sync.
        let laterColdFetches = lines[repaired..<syncEnded].filter {
            $0.contains("hit=network") && !$0.contains("key=/gallery/image?\(number) ") && !$0.hasSuffix("key=/gallery/image?\(number)")
        }
        #expect(!laterColdFetches.isEmpty, "the repair waited for the rescan after the sync")
        #expect(gallery.isMirrored(number, in: dir))
    }
}

/// An agent configuration (polls an hour apart) whose pass holds its second commit batch (the first is its first
/// file alone) until the test sets `released`: the stand-in for a batch of thousands of files and its `syncfs`.
/// Files fetched meanwhile join the held batch.
private struct HeldSecondPassBatch {
    let hooks = AgentTestHooks()
    /// Pass batches begun so far.
    let passBatches = Shared(0)
    /// The second batch is being held now.
    let holding = Shared(false)
    let released = Shared(false)

    /// Image requests the gallery of `largeBatch` served so far (unused otherwise).
    let served: Shared<Int>

    /// A gallery of 300 small images that counts the images it serves, a DIR, and a configuration whose pass holds
    /// its second batch: released by `releaseOnceServed()` once 200 were served, that batch holds many files.
    static func largeBatch(
        _ name: String
    ) async throws -> (gallery: GalleryFixture, dir: TemporaryDirectory, configuration: AgentConfiguration, held: HeldSecondPassBatch) {
        let served = Shared(0)
        let gallery = try await GalleryFixture(count: 300, imageSize: .small) { _ in served.increment() }
        let dir = TemporaryDirectory(name)
        var configuration = try gallery.configuration(dir: dir.path)
        let held = HeldSecondPassBatch(&configuration, served: served)
        return (gallery, dir, configuration, held)
    }

    /// Releases the held batch once 200 images were served; false if they were not within a minute.
    func releaseOnceServed() async -> Bool {
        let served = served
        let reached = await eventually(timeout: .seconds(60)) { served.value >= 200 }
        released.set(true)
        return reached
    }

    init(_ configuration: inout AgentConfiguration, served: Shared<Int> = Shared(0)) {
        self.served = served
        configuration.schedule.pollInterval = .seconds(3600)
        configuration.testHooks = hooks
        let (passBatches, holding, released) = (passBatches, holding, released)
        hooks.setBeforeCommitBatch { lane in
            guard lane == .pass, passBatches.increment() == 2 else { return }
            holding.set(true)
            _ = await eventually(timeout: .seconds(60)) { released.value }
            holding.set(false)
        }
    }
}
