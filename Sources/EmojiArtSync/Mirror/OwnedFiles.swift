import FoundationEssentials

/// The agent's files as the index records them: which are the agent's, and removing them (items gone from the
/// feed, a disk purge) so that nothing else is ever removed.
///
/// Owns no state beyond its collaborators: the index is the ownership record, the `FileInspector` says whether a
/// file is still the one the agent wrote, and the `OwnershipGuard` takes a file out of DIR and unlinks it only if
/// it is (one swapped in meanwhile is put back).
@SyncActor
final class OwnedFiles {
    private let index: AssetIndex
    private let storage: DiskStorage
    private let inspector: FileInspector
    private let log: AccessLog

    init(index: AssetIndex, storage: DiskStorage, inspector: FileInspector, log: AccessLog) {
        self.index = index
        self.storage = storage
        self.inspector = inspector
        self.log = log
    }

    /// How many files the agent owns.
    var count: Int { index.count }

    /// The key recorded for file `name`, if the agent owns it.
    func key(forFileNamed name: String) throws(SyncError) -> AssetKey? {
        try file(named: name)?.key
    }

    /// The row of file `name` and the key it is the file of, if the agent owns it.
    func file(named name: String) throws(SyncError) -> (entry: IndexEntry, key: AssetKey)? {
        guard let entry = try index.entry(named: name),
            let key = try? AssetKey(indexedURL: entry.key, fileName: entry.name)
        else { return nil }
        return (entry, key)
    }

    /// Whether the agent has a recorded file for `key` (the book's `storedImagesIndex.contains`).
    func isStored(_ key: AssetKey) throws(SyncError) -> Bool {
        try index.entry(for: key) != nil
    }

    /// Every key the agent owns a file for. Walks the index: for purges, not per access.
    func keys() throws(SyncError) -> [AssetKey] {
        var keys: [AssetKey] = []
        keys.reserveCapacity(index.count)
        try index.forEachKey { url, name, _ in
            if let key = try? AssetKey(indexedURL: url, fileName: name) { keys.append(key) }
        }
        return keys.sorted()
    }

    /// Removes the agent's file for `key` (only if it is still the file the agent wrote, with the bytes it wrote)
    /// and forgets it. Anything else at the path is left in place (put back if it was taken) and the path stops
    /// being the agent's. Returns the bytes removed.
    @discardableResult
    func remove(_ key: AssetKey) async throws(SyncError) -> Int {
        try await remove(key, keepingRowOfDamagedFile: false).bytes
    }

    /// `remove(_:)`; with `keepingRowOfDamagedFile`, a path whose file is damaged or not the agent's keeps its row
    /// (a purge: the fetch that follows repairs it as a repair would, moving a person's file aside). Throws,
    /// changing nothing, when the file or the index cannot be looked at.
    ///
    /// The decision (the file is intact) is made first; then the `OwnershipGuard` takes the file out of DIR and
    /// unlinks it only if it is still that file: one swapped in meanwhile is put back.
    func remove(_ key: AssetKey, keepingRowOfDamagedFile keepDamaged: Bool) async throws(SyncError) -> (bytes: Int, keptRow: Bool) {
        guard let entry = try index.entry(for: key) else { return (0, false) }
        let name = entry.name
        let verdict = try await inspector.check(entry)
        // Reentrancy: the row may have been replaced or removed while the file was checked.
        guard let now = try index.entry(for: key), now.sha256 == entry.sha256 else { return (0, false) }
        var bytes = 0
        switch verdict {
        case .trusted, .verified:
            guard let identity = now.identity, let fingerprint = now.fingerprint else {
                if keepDamaged { return (0, true) }
                break  // verified, but changed while it was read: not known to be the agent's as it is
            }
            switch try storage.ownership.remove(name, own: identity, expected: fingerprint) {
            case .removed: bytes = entry.size
            case .absent: break
            case .kept(let movedAside):
                if let movedAside { log.movedAside(key, name: name, to: movedAside) }
                if keepDamaged { return (0, true) }
            }
        case .damaged(.missing): break
        case .damaged(.corrupt):
            if keepDamaged { return (0, true) }
        case .changedMeanwhile:
            return (0, false)  // released (something that is not a file took the path) or the row changed
        }
        try index.remove(named: name)
        log.changes.ring()
        return (bytes, false)
    }

    /// The book's `clear()`: removes every file the agent wrote (those still intact) and their rows; a path
    /// whose file is damaged or someone else's keeps its row, for the fetch that follows to repair, and a file
    /// stored while it runs keeps its row. Returns how many files and bytes were removed.
    func clear() async throws -> (files: Int, bytes: Int) {
        var files = 0
        var bytes = 0
        for key in try keys() {
            let removed = try await remove(key, keepingRowOfDamagedFile: true).bytes
            if removed > 0 {
                files += 1
                bytes += removed
            }
        }
        // Rows of files stored while this ran (their keys were fetched during the awaits above) stay: those
        // files are the agent's, and dropping their rows would leave them looking like the user's.
        try index.forgetUnusableAnswers()
        log.changes.ring()
        try await makeDurable()
        return (files, bytes)
    }

    /// Makes everything recorded so far durable against a power cut: the directory's entries (renames,
    /// unlinks) and the index's write-ahead log. Called at the end of a pass and on stop. The checkpoint's marker is
    /// a new name in the state directory: it is left out while the rename gate is shut (`rm -rf DIR` may be inside
    /// the state directory), and the next start checks the index instead.
    func makeDurable() async throws {
        try await storage.syncDirectory()
        let gate = storage.gate
        try await index.checkpoint(mayRecordState: { gate.isOpen })
    }
}
