import Synchronization

/// What a test may make happen inside one agent, at the exact moment that matters: a path whose `lstat` fails,
/// an action between a removal's decision and its taking of the file, a pass held before a batch, a commit held
/// until files queue, a file swapped while it is read for adoption. Injected per agent
/// (`AgentConfiguration.testHooks`, internal), never process-global, so tests that run side by side in one
/// process cannot fire each other's hooks; an agent without them pays a nil check per call.
final class AgentTestHooks: Sendable {
    private let failingStatus = Mutex<[String: Int32]>([:])
    private let beforeTaking = Mutex<(@Sendable (String) -> Void)?>(nil)
    private let beforeForgettingRemoved = Mutex<(@Sendable () async -> Void)?>(nil)
    private let directoryFlushFailure = Mutex<Int32?>(nil)
    private let afterAdoptionRead = Mutex<(@Sendable (String) -> Void)?>(nil)
    private let beforePassBatch = Mutex<(@Sendable (Int) async -> Void)?>(nil)
    private let beforeCommitBatch = Mutex<(@Sendable (GroupCommitter.Lane) async -> Void)?>(nil)
    private let afterRenameTurn = Mutex<(@Sendable (GroupCommitter.Lane, _ batch: Int, _ files: Int) -> Void)?>(nil)
    private let afterRename = Mutex<(@Sendable (GroupCommitter.Lane, _ batch: Int, _ batchFiles: Int) -> Void)?>(nil)
    private let beforeBatchEnds = Mutex<(@Sendable (GroupCommitter.Lane) async -> Void)?>(nil)
    private let gate = Mutex<RenameGate?>(nil)

    /// How long another process holding DIR open keeps the rename gate shut after its last listing or deletion
    /// (`RenameGate.listingHoldLimit`): a test that pauses such a process sets it long, so a slow machine cannot
    /// open the gate under it.
    let listingHoldLimit: Duration?

    init(listingHoldLimit: Duration? = nil) {
        self.listingHoldLimit = listingHoldLimit
    }

    /// The agent's rename gate, once its storage is made: a test holds it shut (`RenameGate.holdShut`) and sees who
    /// waits for it.
    var renameGate: RenameGate? { gate.withLock { $0 } }

    func attach(_ renameGate: RenameGate) {
        gate.withLock { $0 = renameGate }
    }

    /// From now on `lstat` of `path` fails with `errno` (nil: succeeds again).
    func failStatus(of path: String, with errno: Int32?) {
        failingStatus.withLock { $0[path] = errno }
    }

    /// The errno `lstat` of `path` fails with, if a test asked for one.
    func statusFailure(of path: String) -> Int32? {
        failingStatus.withLock { $0[path] }
    }

    /// From now on `fsync` of DIR fails with `errno` (nil: succeeds again), as on a disk that reports an I/O error.
    func failDirectoryFlush(with errno: Int32?) {
        directoryFlushFailure.withLock { $0 = errno }
    }

    var directoryFlushError: Int32? { directoryFlushFailure.withLock { $0 } }

    /// Runs `hook` with the asset path each time a removal has decided to remove a file, just before it takes it.
    func setBeforeTaking(_ hook: (@Sendable (String) -> Void)?) {
        beforeTaking.withLock { $0 = hook }
    }

    func runBeforeTaking(_ path: String) {
        beforeTaking.withLock { $0 }?(path)
    }

    /// Runs `hook` after a removal's files were taken and unlinked, before their rows are forgotten (the silo is
    /// free meanwhile: `OwnedFiles.remove`).
    func setBeforeForgettingRemoved(_ hook: (@Sendable () async -> Void)?) {
        beforeForgettingRemoved.withLock { $0 = hook }
    }

    func runBeforeForgettingRemoved() async {
        if let hook = beforeForgettingRemoved.withLock({ $0 }) { await hook() }
    }

    /// Runs `hook` with the batch's lane before the committer takes each batch from that lane's queue (the files
    /// queued meanwhile join it). The `n`th call of a lane comes before its batch number `n` is taken: the number
    /// the rename hooks name it by (its renames may come after the next batch's call, whose flush overlaps them).
    func setBeforeCommitBatch(_ hook: (@Sendable (GroupCommitter.Lane) async -> Void)?) {
        beforeCommitBatch.withLock { $0 = hook }
    }

    func runBeforeCommitBatch(_ lane: GroupCommitter.Lane) async {
        if let hook = beforeCommitBatch.withLock({ $0 }) { await hook(lane) }
    }

    /// Calls `hook` with the lane, the batch's number in it (from 1) and the number of files, in the silo, after each
    /// turn in which the committer linked and recorded a part of a batch (`GroupCommitter.renamesPerTurn` at most).
    func setAfterRenameTurn(_ hook: (@Sendable (GroupCommitter.Lane, _ batch: Int, _ files: Int) -> Void)?) {
        afterRenameTurn.withLock { $0 = hook }
    }

    func runAfterRenameTurn(_ lane: GroupCommitter.Lane, batch: Int, files: Int) {
        if let hook = afterRenameTurn.withLock({ $0 }) { hook(lane, batch, files) }
    }

    /// Runs `hook` with the lane, the batch's number in it (from 1) and the batch's number of files after each file
    /// of a turn is put into DIR (or refused), on the I/O pool, before the next one is.
    func setAfterRename(_ hook: (@Sendable (GroupCommitter.Lane, _ batch: Int, _ batchFiles: Int) -> Void)?) {
        afterRename.withLock { $0 = hook }
    }

    func runAfterRename(_ lane: GroupCommitter.Lane, batch: Int, batchFiles: Int) {
        if let hook = afterRename.withLock({ $0 }) { hook(lane, batch, batchFiles) }
    }

    /// Runs `hook` with the lane after a batch's files are put in place, recorded and DIR flushed, before their
    /// loads end and the lane's next batch may be put in place (the silo is free meanwhile).
    func setBeforeBatchEnds(_ hook: (@Sendable (GroupCommitter.Lane) async -> Void)?) {
        beforeBatchEnds.withLock { $0 = hook }
    }

    func runBeforeBatchEnds(_ lane: GroupCommitter.Lane) async {
        if let hook = beforeBatchEnds.withLock({ $0 }) { await hook(lane) }
    }

    /// Runs `hook` with the batch's number (from 0) before a pass hands each batch to the silo.
    func setBeforePassBatch(_ hook: (@Sendable (Int) async -> Void)?) {
        beforePassBatch.withLock { $0 = hook }
    }

    func runBeforePassBatch(_ batch: Int) async {
        if let hook = beforePassBatch.withLock({ $0 }) { await hook(batch) }
    }

    /// Runs `hook` with the path each time a file considered for adoption has been read, before the verdict.
    func setAfterAdoptionRead(_ hook: (@Sendable (String) -> Void)?) {
        afterAdoptionRead.withLock { $0 = hook }
    }

    func runAfterAdoptionRead(_ path: String) {
        afterAdoptionRead.withLock { $0 }?(path)
    }
}
