import Logging

/// The parts that keep DIR a mirror of the gallery, wired together once the index is open, each with
/// non-optional collaborators: who owns what is in docs/ARCHITECTURE.md.
///
/// A value of `let`s, made once per agent (`open`); a consumer keeps the parts it uses. Every part lives in the
/// `SyncActor` silo but the storage's lock-guarded pieces.
struct MirrorCore: Sendable {
    let directory: SyncDirectory
    /// The files in DIR: temporary files, the ownership guard, the rename gate.
    let storage: DiskStorage
    /// The stored-images index and ownership record.
    let index: AssetIndex
    /// Counters and log lines of accesses.
    let log: AccessLog
    /// The feed kept, and what the index holds of it.
    let catalogue: FeedCatalogue
    /// Looks at owned files (check, scrub).
    let inspector: FileInspector
    /// Which files are the agent's; removing them.
    let owned: OwnedFiles
    /// Makes new files durable, visible and recorded a batch at a time.
    let committer: GroupCommitter
    /// Every access: memory, disk, network.
    let pipeline: AccessPipeline
    /// Repairs and other user-visible work go here first: a pass waits for it before its next batch.
    let urgentLane: UrgentLane
    /// What a test makes happen inside this agent (nil outside tests).
    let hooks: AgentTestHooks?

    /// Creates the directories and opens the index (rebuilding or importing it when needed), then wires the parts.
    @SyncActor
    static func open(
        directory: SyncDirectory, memory: ImageLoader, fetcher: AssetFetcher, logger: Logger,
        accessLines: AccessLineWriter, hooks: AgentTestHooks?
    ) throws(SyncError) -> MirrorCore {
        try directory.prepare()
        let (index, notice) = try AssetIndex.open(directory: directory)
        if let notice {
            logger.warning("index rebuilt or imported", metadata: ["event": "index", "detail": .string(notice)])
        }
        if let from = index.upgradedFrom {
            logger.notice("index upgraded", metadata: [
                "event": "index", "from_version": "\(from)", "version": "\(AssetIndex.schemaVersion)",
            ])
        }
        return wire(
            index: index, directory: directory, memory: memory, fetcher: fetcher, logger: logger,
            accessLines: accessLines, hooks: hooks)
    }

    /// The parts over a copy of DIR's index in memory (`AssetIndex.snapshot`), for `--dry-run`: nothing is
    /// created in DIR, and what the parts record goes to the copy. Returns the snapshot's notice (an index a real
    /// run would rebuild).
    @SyncActor
    static func openForDryRun(
        directory: SyncDirectory, memory: ImageLoader, fetcher: AssetFetcher, logger: Logger,
        accessLines: AccessLineWriter
    ) throws(SyncError) -> (MirrorCore, notice: String?) {
        let (index, notice) = try AssetIndex.snapshot(of: directory)
        let core = wire(
            index: index, directory: directory, memory: memory, fetcher: fetcher, logger: logger,
            accessLines: accessLines, hooks: nil)
        return (core, notice)
    }

    @SyncActor
    private static func wire(
        index: AssetIndex, directory: SyncDirectory, memory: ImageLoader, fetcher: AssetFetcher, logger: Logger,
        accessLines: AccessLineWriter, hooks: AgentTestHooks?
    ) -> MirrorCore {
        let storage = DiskStorage(directory: directory, hooks: hooks)
        let log = AccessLog(
            logger: logger, accessLines: accessLines, metrics: fetcher.metrics, received: fetcher.receivedBytes,
            directory: directory)
        let catalogue = FeedCatalogue(index: index)
        let inspector = FileInspector(index: index, directory: directory, status: storage.status, log: log)
        let committer = GroupCommitter(storage: storage, index: index, log: log, knownRows: catalogue)
        let pipeline = AccessPipeline(
            memory: memory, index: index, catalogue: catalogue, inspector: inspector, committer: committer,
            fetcher: fetcher, log: log, status: storage.status, directory: directory,
            directoryDescriptor: storage.descriptor, temporaryFolder: storage.temporaryFolder, gate: storage.gate)
        logger.info("database ready", metadata: [
            "event": "setup", "dir": .string(directory.root), "files": .stringConvertible(index.count),
        ])
        return MirrorCore(
            directory: directory, storage: storage, index: index, log: log, catalogue: catalogue, inspector: inspector,
            owned: OwnedFiles(index: index, storage: storage, inspector: inspector, log: log), committer: committer,
            pipeline: pipeline, urgentLane: UrgentLane(), hooks: hooks)
    }

    /// The memory layer.
    var memory: ImageLoader { pipeline.memory }
}
