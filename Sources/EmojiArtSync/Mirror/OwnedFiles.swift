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

    /// `remove(_:keepingRowsOfDamagedFiles:)` of one key, its row not kept: the bytes removed, or the error.
    @discardableResult
    func remove(_ key: AssetKey) async throws(SyncError) -> Int {
        try await remove([key], keepingRowsOfDamagedFiles: false)[0].get().bytes
    }

    /// What removing a key's file came to: the bytes removed, and whether its row was kept (a purge keeps the row of
    /// a damaged file or of one that is not the agent's).
    struct Removal: Sendable, Equatable {
        var bytes = 0
        var keptRow = false
    }

    /// How many keys a removal of many takes at once (`pages(of:)`): a page's rows are read and forgotten in two
    /// turns of the silo, its files taken and unlinked between them on the I/O pool.
    nonisolated static let removalPage = 128

    /// `keys` in the pages a removal of many takes them in.
    nonisolated static func pages(of keys: [AssetKey]) -> [ArraySlice<AssetKey>] {
        slices(of: keys, size: removalPage)
    }

    /// `items` in consecutive slices of `size` (the last one shorter), each keeping its indices in `items`.
    private nonisolated static func slices<Item>(of items: [Item], size: Int) -> [ArraySlice<Item>] {
        stride(from: 0, to: items.count, by: size).map { items[$0..<min($0 + size, items.count)] }
    }

    /// Removes the agent's files for `keys` (a page, `pages(of:)`), each only if it is still the file the agent
    /// wrote with the bytes it wrote, and forgets them. Anything else at a path is left in place (put back if it
    /// was taken) and the path stops being the agent's, unless `keepingRowsOfDamagedFiles` (a purge: the path of a
    /// damaged file or of one that is not the agent's keeps its row, and the fetch that follows repairs it as a
    /// repair would, moving a person's file aside).
    ///
    /// Three steps for the page, each once: the rows read in one transaction and the files looked at in one job off
    /// the silo (`FileInspector.check`); in one silo turn and transaction, each row read again, and the rows of files
    /// with nothing to unlink forgotten; each file that is still the agent's intact file taken into `taken/` and
    /// unlinked off the silo (`OwnershipGuard.remove`: one swapped in meanwhile is put back), and the rows forgotten
    /// in one more turn, where a row still records that file. A crash in between leaves a held file with its row,
    /// handed back at the next start. A disk purge of 90,000 files was a look, two turns, an unlink in the silo and
    /// a transaction each before (docs/BENCHMARKS.md). A result per key, in order: a file that could not be looked at, taken or
    /// unlinked has its error and keeps its row; when the index cannot be read or written, every key that needed
    /// it has that error.
    func remove(_ keys: some Collection<AssetKey>, keepingRowsOfDamagedFiles keepDamaged: Bool) async -> [Result<Removal, SyncError>] {
        let keys = Array(keys)
        var results = Array(repeating: Result<Removal, SyncError>.success(Removal()), count: keys.count)
        var recorded: [(position: Int, entry: IndexEntry)] = []
        do {
            try index.readTransaction { () throws(SyncError) in
                for (position, key) in keys.enumerated() {
                    if let entry = try index.entry(for: key) { recorded.append((position, entry)) }
                }
            }
        } catch {
            return keys.map { _ in .failure(error) }
        }
        guard !recorded.isEmpty else { return results }
        let verdicts = await inspector.check(recorded.map { (entry: $0.entry, key: keys[$0.position]) })
        var taking: [PlannedRemoval] = []
        do throws(SyncError) {
            try index.transaction { () throws(SyncError) in
                for ((position, entry), verdict) in zip(recorded, verdicts) {
                    results[position] = Result { () throws(SyncError) in
                        switch try plan(keys[position], entry: entry, verdict: try verdict.get(), keepDamaged: keepDamaged) {
                        case .done(let removal): return removal
                        case .take(let row, let identity, let fingerprint):
                            taking.append(PlannedRemoval(position: position, row: row, identity: identity, fingerprint: fingerprint))
                            return Removal()
                        }
                    }
                }
            }
        } catch {
            // Rolled back: no row forgotten, nothing taken.
            for (position, _) in recorded where (try? results[position].get()) != nil { results[position] = .failure(error) }
            log.changes.ring()
            return results
        }
        if !taking.isEmpty {
            let removals = await Self.takeAndUnlink(taking.map { ($0.row.name, $0.identity, $0.fingerprint) }, by: storage.ownership)
            await storage.status.hooks?.runBeforeForgettingRemoved()
            forget(taking, removals, keys: keys, keepDamaged: keepDamaged, into: &results)
        }
        log.changes.ring()
        return results
    }

    /// How many jobs on the I/O pool a page's takes and unlinks are split into. On a disk mounted with `discard`
    /// each unlink waits for the device (about 0.4 ms on the test machine, where `rm -rf` of 90,000 small files took
    /// 47 s); four threads unlinking at once took half the time of one (docs/BENCHMARKS.md).
    nonisolated static let unlinkJobs = 4

    /// `OwnershipGuard.remove` of each file (its name, the identity and fingerprint its row records), on the I/O
    /// pool in up to `unlinkJobs` jobs at once: what each came to, in order.
    private nonisolated static func takeAndUnlink(
        _ files: [(name: String, identity: FileIdentity, fingerprint: FileFingerprint)], by ownership: OwnershipGuard
    ) async -> [Result<OwnershipGuard.Removal, SyncError>] {
        let share = max(1, (files.count + unlinkJobs - 1) / unlinkJobs)
        return await withTaskGroup(of: (start: Int, removals: [Result<OwnershipGuard.Removal, SyncError>]).self) { group in
            for slice in slices(of: files, size: share) {
                let part = Array(slice)
                group.addTask {
                    let removals = await BlockingIO.run {
                        part.map { file in
                            Result { () throws(SyncError) -> OwnershipGuard.Removal in
                                try ownership.remove(file.name, own: file.identity, expected: file.fingerprint)
                            }
                        }
                    }
                    return (slice.startIndex, removals)
                }
            }
            var removals = [Result<OwnershipGuard.Removal, SyncError>](repeating: .success(.absent), count: files.count)
            for await (start, part) in group { removals.replaceSubrange(start..<start + part.count, with: part) }
            return removals
        }
    }

    /// What a removal's first turn decided for a file: all it needed (`done`), or a take and an unlink off the silo,
    /// with the row that recorded the file then.
    private enum Plan {
        case done(Removal)
        /// The row records the file's identity and fingerprint: what the taken file must match to be unlinked.
        case take(row: IndexEntry, identity: FileIdentity, fingerprint: FileFingerprint)
    }

    /// A file a removal takes and unlinks off the silo: its key's position in the page, the row it had, and the
    /// identity and fingerprint that row records.
    private struct PlannedRemoval {
        let position: Int
        let row: IndexEntry
        let identity: FileIdentity
        let fingerprint: FileFingerprint
    }

    /// The first turn's part of a removal, once `verdict` was found off the silo: the row is read again (reentrancy:
    /// it may have been replaced or removed while the file was looked at), then the file is to be taken if it is
    /// still the agent's intact file, or its row forgotten (or kept, `keepDamaged`) when there is nothing to unlink.
    private func plan(_ key: AssetKey, entry: IndexEntry, verdict: FileInspector.FileVerdict, keepDamaged: Bool) throws(SyncError) -> Plan {
        guard let now = try index.entry(for: key), now.sha256 == entry.sha256 else { return .done(Removal()) }
        switch verdict {
        case .trusted, .verified:
            if let identity = now.identity, let fingerprint = now.fingerprint {
                return .take(row: now, identity: identity, fingerprint: fingerprint)
            }
            if keepDamaged { return .done(Removal(keptRow: true)) }
            // Verified, but changed while it was read: not known to be the agent's as it is.
        case .damaged(.missing): break
        case .damaged(.corrupt):
            if keepDamaged { return .done(Removal(keptRow: true)) }
        case .changedMeanwhile:
            return .done(Removal())  // released (something that is not a file took the path) or the row changed
        }
        try index.remove(named: entry.name)
        return .done(Removal())
    }

    /// The last turn of a removal: the rows of the files unlinked, found absent, or found not to be the agent's (put
    /// back; their rows kept when `keepDamaged`) are forgotten where they are still the rows the files were taken
    /// with (reentrancy: a fetch may have put a new file at the emptied path meanwhile, whose row stays; its
    /// identity alone would not tell, as the file system may give it the unlinked file's inode, but its
    /// fingerprint's times differ). A file that could not be taken or unlinked keeps its row and has its error.
    private func forget(
        _ taking: [PlannedRemoval], _ removals: [Result<OwnershipGuard.Removal, SyncError>], keys: [AssetKey],
        keepDamaged: Bool, into results: inout [Result<Removal, SyncError>]
    ) {
        var forgetting: [(file: PlannedRemoval, removal: Removal)] = []
        for (file, removal) in zip(taking, removals) {
            switch removal {
            case .failure(let error):
                results[file.position] = .failure(error)
            case .success(.removed):
                forgetting.append((file, Removal(bytes: file.row.size)))
            case .success(.absent):
                forgetting.append((file, Removal()))
            case .success(.kept(let movedAside)):
                if let movedAside { log.movedAside(keys[file.position], name: file.row.name, to: movedAside) }
                if keepDamaged {
                    results[file.position] = .success(Removal(keptRow: true))
                } else {
                    forgetting.append((file, Removal()))
                }
            }
        }
        guard !forgetting.isEmpty else { return }
        do throws(SyncError) {
            try index.transaction { () throws(SyncError) in
                for (file, removal) in forgetting {
                    results[file.position] = Result { () throws(SyncError) in
                        if let now = try index.entry(for: keys[file.position]), now.identity == file.row.identity,
                            now.fingerprint == file.row.fingerprint
                        {
                            try index.remove(named: now.name)
                        }
                        return removal
                    }
                }
            }
        } catch {
            // The files are gone or not the agent's, their rows stay: the next look at each forgets or repairs it.
            for (file, _) in forgetting { results[file.position] = .failure(error) }
        }
    }

    /// The book's `clear()`: removes every file the agent wrote (those still intact) and their rows; a path
    /// whose file is damaged or someone else's keeps its row, for the fetch that follows to repair, and a file
    /// stored while it runs keeps its row. Returns how many files and bytes were removed.
    func clear() async throws -> (files: Int, bytes: Int) {
        var files = 0
        var bytes = 0
        for page in Self.pages(of: try keys()) {
            for result in await remove(page, keepingRowsOfDamagedFiles: true) {
                let removed = try result.get().bytes  // an error ends the purge with its page
                if removed > 0 {
                    files += 1
                    bytes += removed
                }
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
