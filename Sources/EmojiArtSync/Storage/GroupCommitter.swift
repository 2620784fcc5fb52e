import CShims
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Whether the index has a row for a key's file, where that is known without a query: the feed's catalogue
/// (`FeedCatalogue`), which follows every row the index adds or removes. Nil: not known, look it up.
@SyncActor
protocol IndexRowKnowledge: AnyObject {
    func isStored(_ key: AssetKey) -> Bool?
}

/// Makes new asset files durable, visible and recorded a batch at a time: git's `core.fsyncMethod=batch` for the
/// sync directory.
///
/// A finished download arrives as a temporary file that was written but not flushed. The committer gathers every
/// file that arrives while the batches before it are being flushed and put in place, then, for the whole batch:
/// 1. one `syncfs(2)` makes every temporary file's bytes durable (the file system's journal and the disk's cache
///    are flushed once, not once per file); a batch of at most `smallBatch` files is flushed file by file instead;
/// 2. once DIR is not being emptied (`RenameGate`), a turn of up to `renamesPerTurn` files at a time: the silo
///    reads whose each path is (the index's rows), the I/O pool puts each file in place (only where the path is
///    the agent's to write, or empty: `linkat` and `RENAME_NOREPLACE` refuse whatever appeared there meanwhile, and
///    the `OwnershipGuard` unlinks only the agent's own older file), and the silo writes the turn's rows in one
///    SQLite transaction; the silo is free for a repair or a person's request while the files are linked;
/// 3. one `fsync` of DIR makes the renames durable (in the last turn's job, after its links);
/// 4. only then is each waiter resumed, and its asset logged and counted.
///
/// A lane's batches go through two stages in the order they were formed: step 1, then steps 2 to 4. The next
/// batch is formed and flushed while the one before it is put in place and DIR flushed (the disk's wait for one
/// batch overlaps the other's links, which a cold pass otherwise pays one after the other); the batch after
/// it is formed only once it begins its own renames, so at most two batches of a lane are being committed. Batches
/// adapt by themselves: while one is being committed the next one grows (to hundreds of files during a cold pass),
/// and a file that arrives when nothing is being committed is committed at once, alone, so a lone repair lands in
/// milliseconds. docs/RELIABILITY.md gives the durability argument for each crash point.
///
/// Two lanes (`Lane`) batch apart: the files of passes, and the repairs a person's change asked for. A repair
/// during a cold pass would otherwise wait for the batch being committed and then for the next one, thousands of
/// files with their `syncfs`; in its own lane it is flushed file by file and linked in a turn of its own, beside
/// the pass's batch. The two never hold the same key (one load per key is in flight).
///
/// It is also where a path that turns out to be occupied is settled (`publish`): a regular file the agent did not
/// write is adopted when it holds exactly the agent's bytes, else the access fails with a conflict and the file
/// stays untouched.
@SyncActor
final class GroupCommitter {
    /// The steps a test can stop the process at (`EMOJIART_SYNC_TEST_FAULT=commit-kill-STEP`).
    enum Step: String, Sendable, CaseIterable {
        /// The batch's temporary files are written, nothing is flushed.
        case afterWrites = "after-writes"
        /// The temporary files are durable; none is renamed.
        case afterFlush = "after-flush"
        /// The first file of the batch is renamed into place, the others are not.
        case midRenames = "mid-renames"
        /// The first turn's files are put in place (DIR flushed too when it is the last), no index row is written.
        case beforeTransaction = "before-transaction"
        /// Every row is committed; DIR is flushed when the last turn's job did it, nothing is logged.
        case afterTransaction = "after-transaction"
    }

    /// A downloaded asset in a private staged file, waiting to be put at its path.
    struct PendingFile: Sendable {
        let key: AssetKey
        /// The staged file, unnamed or in `tmp/`.
        let file: StagedFile
        /// The staged file's identity, from its writer's descriptor: the commit does not look the path up again.
        var identity: FileIdentity { file.identity }
        let entry: IndexEntry
        /// Its bytes are durable already (`StagedAsset.flushed`): renamed without a flush of its own.
        var flushed = false
    }

    /// What committing one file came to.
    enum Outcome: Sendable, Equatable {
        /// Renamed into place and recorded; `isNew`: the row is new (no older file of the key's was replaced).
        /// `movedAside`: a file at the path that was not the agent's was kept under this name, beside it.
        case installed(isNew: Bool, movedAside: String? = nil)
        /// A regular file the agent does not own sits at the path: nothing was changed; the caller decides
        /// whether it is byte-identical to the download (adopted) or someone else's (a conflict).
        case occupiedByForeignFile
        /// The path holds something the agent may never write (a link, FIFO, directory...): the reason, and what
        /// was found there.
        case refused(String, occupant: PathOccupant)
    }

    /// Files in the queue that one task waits for (one file, or a group fetch's: `publish(_:lane:)`), with that
    /// task's continuation (nil for the task that commits the next batch itself).
    private struct Waiting {
        let files: [PendingFile]
        var continuation: CheckedContinuation<Turn, Never>?
    }

    /// What a waiting task is told: its files' outcomes, or that it commits the next batch (its files are in it).
    private enum Turn {
        case committed([Result<Outcome, any Error>])
        case commitNextBatch
    }

    private let storage: DiskStorage
    private let index: AssetIndex
    private let log: AccessLog
    /// Whether a key's file has a row, where that is known without a query (the feed's catalogue).
    private let knownRows: any IndexRowKnowledge
    /// Which files batch together.
    enum Lane: Int, Sendable, CaseIterable {
        /// Files of passes, refreshes and retries.
        case pass
        /// Repairs a person's change asked for (`RequestPriority.urgent`).
        case repair
    }

    /// A lane's files waiting for its next batch, and its two stages: a batch being formed and flushed
    /// (`committing`), and a batch being put in place (`installing`), which the next batch waits for
    /// (`waitingToInstall`) once its own flush is done.
    private struct LaneQueue {
        var waiting: [Waiting] = []
        /// A task is flushing the lane's next batch, or holds it flushed until the batch before it is in place.
        var committing = false
        /// A task is renaming, recording and flushing DIR for one of the lane's batches.
        var installing = false
        /// The task of the flushed batch that waits for `installing` to end (at most one: the flush stage is held
        /// until its batch begins installing).
        var waitingToInstall: CheckedContinuation<Void, Never>?
        /// Batches taken from the lane's queue so far: each batch's number, from 1 (the test hooks name it).
        var batchesTaken = 0
    }

    private var lanes = Array(repeating: LaneQueue(), count: Lane.allCases.count)

    /// Batches committed and files in them, since start (`status --json`, the benchmarks, tests).
    private(set) var batches = 0
    private(set) var files = 0
    /// Files waiting for a next batch, in either lane.
    var queued: Int { lanes.reduce(0) { $0 + $1.waiting.reduce(0) { $0 + $1.files.count } } }
    /// The largest batch so far.
    private(set) var largestBatch = 0
    /// Files of flushed batches waiting for the batch before theirs to be put in place, in either lane.
    private(set) var filesFlushedAhead = 0

    init(storage: DiskStorage, index: AssetIndex, log: AccessLog, knownRows: any IndexRowKnowledge) {
        self.storage = storage
        self.index = index
        self.log = log
        self.knownRows = knownRows
    }

    private var directory: SyncDirectory { storage.directory }

    /// Puts a staged asset at its path, if the path is the agent's to write, and returns once the file is durable
    /// and recorded (with `tag`, the feed's tag for it). Throws a `.conflict` error when the path is not the
    /// agent's, leaving whatever is there untouched.
    ///
    /// Whether the path is the agent's is decided when the file is put in place, from the index's row read just
    /// before and from what is at the path at that moment (the kernel refuses an occupied path; the guard looks at
    /// what it swapped out), because a purge, a repair or the user may have changed it since the fetch was decided.
    func publish(_ staged: StagedAsset, tag: String?, lane: Lane = .pass) async throws {
        let file = try pendingFile(for: staged, tag: tag)
        try await settle(try await commit(file, in: lane), of: staged.asset, entry: file.entry)
    }

    /// `publish(_:tag:lane:)` for several staged assets (a group fetch's), committed with one wait: the result of
    /// each, in order.
    func publish(_ group: [(staged: StagedAsset, tag: String?)], lane: Lane = .pass) async -> [Result<Void, any Error>] {
        var results: [Result<Void, any Error>] = []
        var files: [PendingFile] = []
        var committed: [Int] = []
        for (staged, tag) in group {
            do {
                files.append(try pendingFile(for: staged, tag: tag))
                committed.append(results.count)
                results.append(.success(()))
            } catch {
                results.append(.failure(error))
            }
        }
        for ((position, file), outcome) in zip(zip(committed, files), await commit(files, in: lane)) {
            do {
                try await settle(try outcome.get(), of: group[position].staged.asset, entry: file.entry)
            } catch {
                results[position] = .failure(error)
            }
        }
        return results
    }

    /// The queue's record of a staged asset: its row-to-be, with `tag`. Throws (the temporary file removed) when it
    /// was staged without its digest.
    private func pendingFile(for staged: StagedAsset, tag: String?) throws -> PendingFile {
        let asset = staged.asset
        let name = asset.key.fileName
        let validators = staged.validators
        guard let sha256 = asset.sha256 else {
            staged.file.discard()
            throw SyncError(.system, "\(name) was staged without its digest; not stored", path: directory.path(ofAsset: name))
        }
        let entry = IndexEntry(
            name: name, key: asset.key.rawValue, size: asset.size, sha256: sha256, tag: tag,
            etag: validators.etag, lastModified: validators.lastModified)
        return PendingFile(key: asset.key, file: staged.file, entry: entry, flushed: staged.flushed)
    }

    /// What a commit's outcome means for the asset: stored (logged), adopted, or a conflict thrown.
    private func settle(_ outcome: Outcome, of asset: Asset, entry: IndexEntry) async throws {
        let path = directory.path(ofAsset: entry.name)
        switch outcome {
        case .installed(_, let movedAside):
            log.pathStored(path)
            if let movedAside { log.movedAside(asset.key, name: entry.name, to: movedAside) }
        case .occupiedByForeignFile:
            try await adoptOrRefuse(asset, entry: entry, path: path)
        case .refused(let refusal, let occupant):
            throw log.conflict(asset.key, path: path, what: refusal, occupant: occupant)
        }
    }

    /// A regular file the agent did not write sits at the path: adopted when it holds exactly the bytes the
    /// server sent and did not change while it was read (fingerprint taken before the read, compared after), a
    /// conflict otherwise. A file swapped in during the read is never recorded as the agent's. The looks and the
    /// read run in one job on io (`lookForAdoption`); the silo decides from what it found.
    private func adoptOrRefuse(_ asset: Asset, entry: IndexEntry, path: String) async throws {
        let status = storage.status
        let look = try await BlockingIO.run { try Self.lookForAdoption(at: path, status: status) }
        if let refusal = look.before.refusal(owned: false) {
            throw log.conflict(asset.key, path: path, what: refusal, occupant: look.before)
        }
        guard let found = look.found, let fingerprint = found.fingerprint, look.digest == asset.sha256,
            look.fingerprintAfter == fingerprint, let after = look.after, after.refusal(owned: false) == nil
        else {
            throw log.conflict(asset.key, path: path, what: "a file the agent did not write", occupant: look.after ?? look.before)
        }
        // Another access may have recorded the path meanwhile: then it is the agent's already.
        if try index.entry(named: entry.name) == nil {
            var adopted = entry
            adopted.fingerprint = fingerprint
            adopted.identity = found.identity  // adopted: from now on this file is the agent's (its birth time too)
            try index.put(adopted)
        }
        log.adopted(asset.key)
    }

    /// What io found at a path the committer could not put a file on (`adoptOrRefuse`).
    private struct AdoptionLook: Sendable {
        /// What sat at the path before the read; when the agent may not write it, nothing else was looked at.
        let before: PathOccupant
        /// Its status before the read, the SHA-256 of its bytes (nil: not a valid PNG, so not the bytes of one
        /// the agent fetched), what sat there after the read and its fingerprint then.
        var found: FileStatus?
        var digest: String?
        var after: PathOccupant?
        var fingerprintAfter: FileFingerprint?
    }

    private nonisolated static func lookForAdoption(at path: String, status: PathStatus) throws(SyncError) -> AdoptionLook {
        var look = AdoptionLook(before: try status.occupant(at: path))
        guard look.before.refusal(owned: false) == nil else { return look }
        look.found = try status.status(of: path)
        look.digest = try? CheckedFile.read(at: path).sha256
        status.hooks?.runAfterAdoptionRead(path)
        look.after = try status.occupant(at: path)
        look.fingerprintAfter = try status.fingerprint(of: path)
        return look
    }

    /// Commits `file` with the batch that is open now, and returns once that batch is durable and recorded.
    /// Throws when the batch could not be made durable or recorded; the temporary file is gone either way.
    func commit(_ file: PendingFile, in lane: Lane = .pass) async throws -> Outcome {
        try await commit([file], in: lane)[0].get()
    }

    /// Commits `files` with the batch that is open now (all in the same one), and returns once that batch is durable
    /// and recorded: each file's outcome, or why it could not be made durable or recorded (its temporary file is
    /// gone either way).
    ///
    /// No task of its own does the work: the caller that finds nothing being committed commits the batch (its own
    /// files, and whatever arrived meanwhile), and hands the next batch, if files arrived while it worked, to the
    /// task of the first of them. So a caller costs its task one entry into the silo and one resumption whatever
    /// its number of files, and a batch two trips to the I/O pool (flush, then the directory's `fsync`).
    func commit(_ files: [PendingFile], in lane: Lane = .pass) async -> [Result<Outcome, any Error>] {
        guard !files.isEmpty else { return [] }
        let position = lanes[lane.rawValue].waiting.count
        lanes[lane.rawValue].waiting.append(Waiting(files: files, continuation: nil))
        if lanes[lane.rawValue].committing {
            let turn = await withCheckedContinuation { continuation in
                lanes[lane.rawValue].waiting[position].continuation = continuation
            }
            if case .committed(let outcomes) = turn { return outcomes }
        }
        lanes[lane.rawValue].committing = true
        return await commitQueuedBatch(of: lane, ownCount: files.count)
    }

    /// Commits every file queued now (the caller's own, `ownCount` files, among them), resumes the others' tasks, and
    /// hands the next batch to the first caller that arrived meanwhile. Returns the caller's outcomes.
    ///
    /// The batch's flush overlaps the previous batch's renames and DIR's flush: it is taken and flushed while the
    /// batch before it is put in place, and the next batch is handed on once this one begins its own renames.
    /// Batches of a lane are put in place in the order they were taken.
    private func commitQueuedBatch(of lane: Lane, ownCount: Int) async -> [Result<Outcome, any Error>] {
        await storage.status.hooks?.runBeforeCommitBatch(lane)
        let batch = lanes[lane.rawValue].waiting
        lanes[lane.rawValue].waiting.removeAll(keepingCapacity: true)
        let files = batch.count == 1 ? batch[0].files : batch.flatMap(\.files)
        lanes[lane.rawValue].batchesTaken += 1
        let number = lanes[lane.rawValue].batchesTaken
        var outcomes: ArraySlice<Result<Outcome, any Error>>
        if let failure = await flush(files) {
            handOnNextBatch(of: lane)
            outcomes = files.map { _ in .failure(failure) }[...]
        } else {
            // Only the task holding the flush stage waits here, so the stage is free when it is resumed; looked at
            // again all the same, since the silo ran other jobs in between.
            while lanes[lane.rawValue].installing {
                filesFlushedAhead += files.count
                await withCheckedContinuation { continuation in
                    lanes[lane.rawValue].waitingToInstall = continuation
                }
                filesFlushedAhead -= files.count
            }
            lanes[lane.rawValue].installing = true
            handOnNextBatch(of: lane)
            outcomes = await install(files, of: lane, number: number)[...]
            lanes[lane.rawValue].installing = false
            if let next = lanes[lane.rawValue].waitingToInstall {
                lanes[lane.rawValue].waitingToInstall = nil
                next.resume()
            }
        }
        batches += 1
        self.files += files.count
        largestBatch = max(largestBatch, files.count)
        // The caller's files are the ones no task waits for (it found nothing being committed, or was handed this
        // batch, which takes its continuation out); every other caller is resumed with its own.
        var mine: [Result<Outcome, any Error>]?
        for waiting in batch {
            let theirs = Array(outcomes.prefix(waiting.files.count))
            outcomes = outcomes.dropFirst(theirs.count)
            if let continuation = waiting.continuation {
                continuation.resume(returning: .committed(theirs))
            } else {
                mine = theirs
            }
        }
        guard let mine else {
            let error = SyncError(.system, "the files of the caller that committed a batch were not in it")
            return Array(repeating: .failure(error), count: ownCount)
        }
        return mine
    }

    /// The lane's next batch, if files wait for one, begins now (its first caller's task takes it); else the lane
    /// has no batch being formed.
    private func handOnNextBatch(of lane: Lane) {
        if lanes[lane.rawValue].waiting.isEmpty {
            lanes[lane.rawValue].committing = false
        } else if let next = lanes[lane.rawValue].waiting[0].continuation {
            lanes[lane.rawValue].waiting[0].continuation = nil
            next.resume(returning: .commitNextBatch)
        }
    }

    /// 1. Durable bytes, once for the batch, off the silo: nil, or why the batch could not be flushed (its temporary
    /// files are discarded then).
    private func flush(_ files: [PendingFile]) async -> SyncError? {
        TestFaultSwitch.killIfAsked(at: .afterWrites)
        let folder = storage.temporaryFolder
        let unflushed = files.lazy.filter { !$0.flushed }.map(\.file)
        if !unflushed.isEmpty, let failure = await BlockingIO.run({ [unflushed = Array(unflushed)] in Self.flush(unflushed, in: folder) }) {
            for file in files { file.file.discard() }
            return failure
        }
        TestFaultSwitch.killIfAsked(at: .afterFlush)
        return nil
    }

    /// Steps 2 and 3 for a flushed batch (the lane's `number`th): each file put in place and recorded, a turn of
    /// files at a time, then DIR flushed.
    private func install(_ files: [PendingFile], of lane: Lane, number: Int) async -> [Result<Outcome, any Error>] {
        // A file taken back after its link (`placeAndRecord`) is put in again as the named file it became.
        var batch = files
        // 2. Decide, link and record, a turn of the batch at a time (`linksPerTurn`): the silo reads whose each
        // path is, the I/O pool links or swaps the files in (the silo meanwhile free for a repair or a person's
        // request), and the silo records them. Nothing is renamed into DIR while it is being emptied, nor ever once
        // it is gone (`RenameGate`): the gate is asked before each turn and each link.
        var outcomes = [Result<Outcome, any Error>?](repeating: nil, count: batch.count)
        var installed: [InstalledFile] = []
        // Positions in the batch still to put in place, in order; `next` is the first of them.
        var waiting = Array(batch.indices)
        var next = 0
        // DIR flushed by the last turn's job, after its links (nil: not yet).
        var directoryFlush: SyncError??
        while next < waiting.count {
            let turn = Array(waiting[next..<min(waiting.count, next + linksPerTurn)])
            // The last turn flushes DIR in the same job as its links, when every file of it was handled.
            let last = next + turn.count == waiting.count
            let done = await placeAndRecord(
                turn, of: &batch, lane: lane, number: number, outcomes: &outcomes,
                flushingDirectory: last ? .some(!installed.isEmpty) : nil)
            if case .gone(let gone) = done.gate {
                let error = SyncError(.system, "\(directory.root) is being removed (\(gone)): nothing is put back into it", path: directory.root)
                for position in waiting[next...] {
                    batch[position].file.discard()
                    outcomes[position] = .failure(error)
                }
                break
            }
            if case .shut = done.gate {
                // Waited for off the silo (its looks are system calls); looked at again by the next turn.
                _ = await storage.gate.waitUntilOpen(isolation: nil)
                continue
            }
            installed.append(contentsOf: done.installed)
            next += done.handled
            waiting.append(contentsOf: done.takenBack)
            if let flushed = done.directoryFlush { directoryFlush = .some(flushed) }
            storage.status.hooks?.runAfterRenameTurn(lane, batch: number, files: done.handled)
        }
        TestFaultSwitch.killIfAsked(at: .afterTransaction)
        // 3. Durable renames, once for the batch (the temporary directory's entries need no flush: a temporary
        // file a crash leaves there is removed at the next start), by the last turn's job or else here. A failed
        // flush fails every file of the batch: nothing is reported durable that is not (the files stay, recorded;
        // the next look finds them intact).
        if !installed.isEmpty {
            let failure: SyncError?
            if let flushed = directoryFlush {
                failure = flushed
            } else {
                do {
                    try await storage.syncDirectory(includingStateDirectory: false)
                    failure = nil
                } catch {
                    failure = error
                }
            }
            if let failure {
                for file in installed { outcomes[file.position] = .failure(failure) }
            }
            await storage.status.hooks?.runBeforeBatchEnds(lane)
        }
        return outcomes.map { $0 ?? .failure(SyncError(.system, "a file of the batch was never put in place")) }
    }

    /// A file of the batch put at its path: its position in the batch, the identity of the file put there, whether
    /// it replaced one, and its fingerprint there when known (read from a linked file's descriptor, or after a swap
    /// on the I/O pool; nil: read at the next look).
    private struct InstalledFile {
        let position: Int
        let identity: FileIdentity
        let replaced: Bool
        let fingerprint: FileFingerprint?
    }

    /// Files taken back after their link because another process listed DIR meanwhile (`placeAndRecord`), since
    /// the committer was made; for tests.
    private(set) var filesTakenBack = 0
    /// New files a turn may link now: `renamesPerTurn`, halved after each turn taken back, doubled after each that
    /// was not.
    private var linksPerTurn = GroupCommitter.renamesPerTurn

    /// Files linked and recorded in one turn, at most (`placeAndRecord`): the silo records them in one transaction.
    nonisolated static let renamesPerTurn = 64

    /// What the I/O pool did with a turn's files (`placeTurn`).
    private struct TurnPlacement: Sendable {
        /// The gate as the turn found it: nothing was placed unless it was open.
        var gate: RenameGate.Verdict = .open
        /// Each handled file's outcome, from the turn's start (the files after them wait for the next turn), and
        /// whether and how it was put at its path.
        var outcomes: [Result<Outcome, any Error>] = []
        var placed: [Placement?] = []
        /// Files taken back after their link (their offsets in the turn), as the named files they became.
        var takenBack: [(offset: Int, file: PendingFile)] = []
        /// DIR's flush after the links, when the turn was the batch's last and handled all its files: nil when not
        /// done, else nil or the error.
        var directoryFlush: SyncError??
    }

    /// How a file was put at its path (`place(_:row:in:)`).
    private struct Placement: Sendable {
        /// An older file of the agent's was at the path (swapped out by the `OwnershipGuard`).
        let replaced: Bool
        let fingerprint: FileFingerprint?
    }

    /// Decides, links and records the files of `batch` at the positions `turn`: whose each path is, read in the
    /// silo from the index (`ownRows`); the links or swaps, with the gate looked at before each, on the I/O pool
    /// (`placeTurn`); the rows, in the silo again, in one transaction. Sets each handled file's outcome in `outcomes`
    /// and returns the files installed, how many of `turn` were handled (from its start), the positions taken back
    /// (their files in `batch` replaced by the named files they became), and the gate as the turn found it.
    ///
    /// What the silo did while the files were linked cannot be undone by the links: an absent path is only ever
    /// filled by `linkat` or `RENAME_NOREPLACE`, which refuse anything that appeared there, and a swap unlinks what
    /// came out only if it is the file the row read before recorded. After the links, the listings of DIR by other
    /// processes are counted again: when one began during the turn it may have passed the turn's new files, which
    /// are taken back (`takeBack`) and put in place again once the gate opens.
    ///
    /// `flushingDirectory`: the turn is the batch's last, and (its value) files of earlier turns were put in place:
    /// then DIR is flushed in the same job, after the links, if the turn handled all its files and any file of the
    /// batch was put in place (`directoryFlush`, nil when it was not).
    private func placeAndRecord(
        _ turn: [Int], of batch: inout [PendingFile], lane: Lane, number: Int,
        outcomes: inout [Result<Outcome, any Error>?], flushingDirectory: Bool?
    ) async -> (installed: [InstalledFile], handled: Int, takenBack: [Int], gate: RenameGate.Verdict, directoryFlush: SyncError??) {
        let files = turn.map { batch[$0] }
        let rows: [IndexEntry?]
        do {
            rows = try ownRows(files)
        } catch {
            for position in turn {
                batch[position].file.discard()
                outcomes[position] = .failure(error)
            }
            return ([], turn.count, [], .open, nil)
        }
        let batchFiles = batch.count
        let placement = await BlockingIO.run { [storage] in
            Self.placeTurn(
                files, rows: rows, in: storage, lane: lane, number: number, batchFiles: batchFiles,
                flushingDirectory: flushingDirectory)
        }
        if case .open = placement.gate {} else { return ([], 0, [], placement.gate, nil) }
        var installed: [InstalledFile] = []
        for (offset, outcome) in placement.outcomes.enumerated() {
            let position = turn[offset]
            outcomes[position] = outcome
            if let placed = placement.placed[offset] {
                installed.append(InstalledFile(
                    position: position, identity: files[offset].identity, replaced: placed.replaced, fingerprint: placed.fingerprint))
            }
        }
        var takenBack: [Int] = []
        for (offset, again) in placement.takenBack {
            let position = turn[offset]
            batch[position] = again
            outcomes[position] = nil
            takenBack.append(position)
        }
        filesTakenBack += takenBack.count
        // Fewer links a turn while listings keep coming (a program that keeps DIR open and polls its listing):
        // each turn is shorter, so fewer are taken back and the files still get in.
        linksPerTurn = takenBack.isEmpty ? min(Self.renamesPerTurn, linksPerTurn * 2) : max(1, linksPerTurn / 2)
        let handled = placement.outcomes.count
        TestFaultSwitch.killIfAsked(at: .beforeTransaction)
        do {
            let new = try record(installed.map { (batch[$0.position].entry, $0) })
            for (file, isNew) in zip(installed, new) {
                if case .success(.installed(_, let movedAside)) = outcomes[file.position] {
                    outcomes[file.position] = .success(.installed(isNew: isNew, movedAside: movedAside))
                }
            }
            return (installed, handled, takenBack, .open, placement.directoryFlush)
        } catch {
            // No rows (a full disk, say): a new file left in place would look like the user's from now on. It is
            // taken back, if it is still the file linked (a replaced file keeps its old row and is repaired later).
            let new = installed.filter { !$0.replaced }
            let names = new.map { batch[$0.position].entry.name }
            let removals = await BlockingIO.run { [ownership = storage.ownership] in
                zip(names, new.map(\.identity)).map { name, identity -> SyncError? in
                    do throws(SyncError) {
                        _ = try ownership.remove(name, own: identity, expected: nil)
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            for file in installed { outcomes[file.position] = .failure(error) }
            for (file, removal) in zip(new, removals) {
                if let removal {
                    outcomes[file.position] = .failure(SyncError(.system, "\(error.message); and the new file could not be taken back: \(removal.message)"))
                }
            }
            return ([], handled, takenBack, .open, placement.directoryFlush)
        }
    }

    /// The I/O pool's part of a turn: looks at the gate (its state files too), then puts each file at its path while
    /// the gate admits renames (`place(_:row:in:)`), takes the new files back if a listing of DIR by another
    /// process may have passed them, and flushes DIR if asked (see `placeAndRecord`).
    private nonisolated static func placeTurn(
        _ files: [PendingFile], rows: [IndexEntry?], in storage: DiskStorage, lane: Lane, number: Int, batchFiles: Int,
        flushingDirectory installedBefore: Bool?
    ) -> TurnPlacement {
        let gate = storage.gate
        let hooks = storage.status.hooks
        var turn = TurnPlacement()
        turn.gate = gate.lookOnce()
        guard case .open = turn.gate else { return turn }
        let listingsBefore = gate.listingMark
        for (file, row) in zip(files, rows) {
            // A deletion the watcher reports meanwhile means `rm -rf DIR` may have begun, and a name put in after
            // `rm` listed DIR makes it fail with "Directory not empty": the rest wait for the next turn.
            if !gate.admitsRenameNow { break }
            let (outcome, placed) = place(file, row: row, in: storage)
            turn.outcomes.append(outcome)
            turn.placed.append(placed)
            hooks?.runAfterRename(lane, batch: number, batchFiles: batchFiles)
        }
        if turn.placed.contains(where: { $0 != nil }), gate.listingMayHavePassedFiles(linkedSince: listingsBefore) {
            for (offset, placed) in turn.placed.enumerated() {
                guard let placed, !placed.replaced else { continue }
                switch takeBack(files[offset], from: storage.ownership, gate: gate) {
                case .stays:
                    continue
                case .takenBack(let again):
                    turn.placed[offset] = nil
                    turn.takenBack.append((offset, again))
                case .discarded(let why):
                    turn.placed[offset] = nil
                    turn.outcomes[offset] = .failure(SyncError(
                        .system, "\(storage.directory.root) is being removed (\(why)): the new file was taken out again",
                        path: storage.directory.root))
                }
            }
        }
        if let installedBefore, turn.outcomes.count == files.count, turn.takenBack.isEmpty,
            installedBefore || turn.placed.contains(where: { $0 != nil })
        {
            turn.directoryFlush = .some(storage.flushDirectory(includingStateDirectory: false))
        }
        return turn
    }

    /// What taking a file back came to (`takeBack`).
    private enum TakeBack {
        /// It stays where it is: the file at the path is not the one put there (someone else's, put back at once),
        /// or it could not be taken (then at worst a `rm -rf DIR` under way fails, as it would have without the look).
        case stays
        /// Taken into `taken/`, as the named staged file it then is (its bytes durable already), to be put in place
        /// again.
        case takenBack(PendingFile)
        /// DIR is being removed (why): `taken/` went with the state directory, and the file was unlinked instead.
        case discarded(String)
    }

    /// Takes `file`, just linked or renamed to its path, back out of DIR into the state directory's `taken/`.
    /// `rm -rf DIR` may have deleted the state directory already (it deletes DIR's entries in its listing's order):
    /// then nothing can be taken into `taken/`, the agent stops, and the file, left, would make `rm` fail; it is
    /// unlinked if it is still the file this job linked (`OwnershipGuard.discardJustLinked`).
    private nonisolated static func takeBack(_ file: PendingFile, from ownership: OwnershipGuard, gate: RenameGate) -> TakeBack {
        let held: OwnershipGuard.HeldFile?
        do {
            held = try ownership.take(file.entry.name)
        } catch {
            return .stays
        }
        guard let held else {
            // Nothing came out: the path is empty, or `taken/` is gone.
            guard case .gone(let why) = gate.lookOnce(), ownership.discardJustLinked(file.entry.name, identity: file.identity) else {
                return .stays
            }
            return .discarded(why)
        }
        guard held.identity == file.identity else {
            // Never another's file: back at its name, or beside it; if even that fails it stays in `taken/`,
            // which is handed back to DIR at the next start.
            _ = try? ownership.putBack(held)
            return .stays
        }
        return .takenBack(PendingFile(
            key: file.key, file: StagedFile(path: held.path, identity: held.identity), entry: file.entry, flushed: true))
    }

    /// The row that records each file's path as the agent's, for that file's key (nil: the path is not the
    /// agent's), read in the silo before the turn's links. A key known to have no row (`knownRows`: every file
    /// of a cold pass) is not looked up; the others are read in one transaction (each statement outside one takes
    /// and drops SQLite's locks). Only the key's own load (this one) adds its row, and a removal meanwhile only
    /// makes the swap find nothing or a file it keeps, so the rows hold for the links that follow.
    private func ownRows(_ batch: [PendingFile]) throws(SyncError) -> [IndexEntry?] {
        let unknown = batch.map { knownRows.isStored($0.key) != false }
        guard unknown.contains(true) else { return Array(repeating: nil, count: batch.count) }
        return try index.readTransaction { () throws(SyncError) in
            var rows: [IndexEntry?] = []
            rows.reserveCapacity(batch.count)
            for (file, lookUp) in zip(batch, unknown) {
                let row = lookUp ? try index.entry(named: file.entry.name) : nil
                rows.append(row?.key == file.entry.key ? row : nil)
            }
            return rows
        }
    }

    /// Puts one file in place if its path is the agent's to write, on the I/O pool. `row`: the index's row for the
    /// path and this key (nil: the path is not the agent's). Returns the outcome and, when the file was installed,
    /// how (`Placement`).
    ///
    /// A path that is not the agent's is only ever written by `linkat` or `renameat2(RENAME_NOREPLACE)`, which
    /// refuse anything that exists there, so that is tried first: an absent path (every file of a cold pass) costs
    /// the link or rename alone, and only a refused one looks (`lstat`) at what is in the way, to say what it is. On the
    /// agent's path a regular file is replaced through the `OwnershipGuard`: unlinked only if it is the file the
    /// row records (its identity), moved aside otherwise.
    private nonisolated static func place(
        _ file: PendingFile, row: IndexEntry?, in storage: DiskStorage
    ) -> (outcome: Result<Outcome, any Error>, placed: Placement?) {
        let name = file.entry.name
        let path = storage.directory.path(ofAsset: name)
        let status = storage.status
        do {
            // Not the agent's path, or the agent's with nothing there: only ever onto an empty path.
            let occupant = try row.map { _ throws(SyncError) in try status.occupant(at: path) }
            if let occupant, let refusal = occupant.refusal(owned: true) {
                file.file.discard()
                return (.success(.refused(refusal, occupant: occupant)), nil)
            }
            guard let row, occupant?.kind == .regular else {
                switch try storage.install(file.file, as: name) {
                case .installed(let fingerprint):
                    TestFaultSwitch.killIfAsked(at: .midRenames)
                    return (.success(.installed(isNew: true)), Placement(replaced: false, fingerprint: fingerprint))
                case .occupied:
                    // Say what is in the way (it appeared since the look, on the agent's path).
                    if row == nil {
                        let occupant = try status.occupant(at: path)
                        if let refusal = occupant.refusal(owned: false) {
                            return (.success(.refused(refusal, occupant: occupant)), nil)
                        }
                    }
                    return (.success(.occupiedByForeignFile), nil)
                }
            }
            switch try storage.ownership.replace(name, with: file.file, own: row.identity) {
            case .installed(let movedAside):
                TestFaultSwitch.killIfAsked(at: .midRenames)
                // Its fingerprint there, if the path still holds it (unknown otherwise: read at the next look).
                let now = try? status.fingerprint(of: path)
                let fingerprint = now?.identity == file.identity ? now : nil
                return (.success(.installed(isNew: false, movedAside: movedAside)), Placement(replaced: true, fingerprint: fingerprint))
            case .occupied:
                return (.success(.occupiedByForeignFile), nil)
            }
        } catch {
            file.file.discard()  // placed already when it was renamed; a failed look leaves it
            return (.failure(error), nil)
        }
    }

    /// Writes the rows of the installed files, with the identity of the file the agent put there and its
    /// fingerprint when the I/O pool read it, in one transaction. Returns, per entry, whether its row is new.
    private func record(_ files: [(entry: IndexEntry, installed: InstalledFile)]) throws(SyncError) -> [Bool] {
        guard !files.isEmpty else { return [] }
        return try index.transaction { () throws(SyncError) in
            var new: [Bool] = []
            for (var entry, installed) in files {
                entry.identity = installed.identity
                entry.fingerprint = installed.fingerprint?.identity == installed.identity ? installed.fingerprint : nil
                new.append(try index.put(entry))
            }
            return new
        }
    }

    /// Up to this many files a batch is flushed file by file: a lone repair then waits for its own bytes only,
    /// not for every dirty page of the file system (`syncfs` on a machine that is busy writing took 20 ms).
    nonisolated static let smallBatch = 8

    /// Makes `files` durable: an `fsync` each for a small batch, one `syncfs(2)` of the file system holding `folder`
    /// (which holds every staged file, named or not) for a larger one. Nil, or the error.
    private nonisolated static func flush(_ files: [StagedFile], in folder: TemporaryFolder) -> SyncError? {
        guard files.count <= smallBatch else { return flushFileSystem(holding: folder.path) }
        for file in files {
            if let failure = file.flush() { return failure }
        }
        return nil
    }

    /// `syncfs(2)` on the file system of `path`; nil, or the error.
    private nonisolated static func flushFileSystem(holding path: String) -> SyncError? {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0 { return SyncError.system("open", path: path, errno: errno, hint: "cannot flush new files to disk") }
        defer { close(fd) }
        if emojiart_syncfs(fd) != 0 {
            return SyncError.system("syncfs", path: path, errno: errno, hint: "cannot flush new files to disk")
        }
        return nil
    }
}
