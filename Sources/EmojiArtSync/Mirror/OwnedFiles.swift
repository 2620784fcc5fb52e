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

    /// How many keys a removal of many takes at once (`pages(of:)`): a page's files are taken, unlinked and
    /// forgotten in one turn of the silo, a few milliseconds, which a repair queued behind it does not notice.
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
    /// the silo (`FileInspector.check`); in one silo turn and transaction, each row read again and each file that is
    /// still the agent's intact file taken into `taken/` (`OwnershipGuard.takeForRemoval`: one swapped in meanwhile
    /// is put back); the taken files unlinked in one job off the silo, and their rows forgotten in one more turn,
    /// where a row still records that file. A crash in between leaves a held file with its row, handed back at the
    /// next start. A disk purge of 90,000 files was a look, two turns, an unlink in the silo and a transaction each
    /// before (docs/BENCHMARKS.md). A result per key, in order: a file that could not be looked at, taken or
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
        var held: [HeldForRemoval] = []
        do throws(SyncError) {
            try index.transaction { () throws(SyncError) in
                for ((position, entry), verdict) in zip(recorded, verdicts) {
                    results[position] = Result { () throws(SyncError) in
                        switch try take(keys[position], entry: entry, verdict: try verdict.get(), keepDamaged: keepDamaged) {
                        case .done(let removal): return removal
                        case .held(let file, let row):
                            held.append(HeldForRemoval(position: position, file: file, row: row))
                            return Removal()
                        }
                    }
                }
            }
        } catch {
            // Rolled back, no row forgotten: the files held go back to their rows.
            for (position, _) in recorded where (try? results[position].get()) != nil { results[position] = .failure(error) }
            for file in held { results[file.position] = .failure(putBack(file.file, after: error)) }
            log.changes.ring()
            return results
        }
        if !held.isEmpty {
            let unlinked = await Self.unlinkHeld(held.map(\.file.path))
            await storage.status.hooks?.runBeforeForgettingRemoved()
            forgetUnlinked(held, unlinked, keys: keys, into: &results)
        }
        log.changes.ring()
        return results
    }

    /// How many jobs on the I/O pool a page's unlinks are split into. On a disk mounted with `discard` each unlink
    /// waits for the device (about 0.4 ms on the test machine, where `rm -rf` of 90,000 small files took 47 s);
    /// four threads unlinking at once took half the time of one (docs/BENCHMARKS.md).
    nonisolated static let unlinkJobs = 4

    /// `OwnershipGuard.unlinkHeld` of `paths`, in up to `unlinkJobs` jobs at once: the errno of each, in order.
    private nonisolated static func unlinkHeld(_ paths: [String]) async -> [Int32?] {
        let share = max(1, (paths.count + unlinkJobs - 1) / unlinkJobs)
        return await withTaskGroup(of: (start: Int, failures: [Int32?]).self) { group in
            for slice in slices(of: paths, size: share) {
                let part = Array(slice)
                group.addTask { (slice.startIndex, await BlockingIO.run { OwnershipGuard.unlinkHeld(part) }) }
            }
            var failures = [Int32?](repeating: nil, count: paths.count)
            for await (start, part) in group { failures.replaceSubrange(start..<start + part.count, with: part) }
            return failures
        }
    }

    /// Puts a held file whose removal failed with `error` back in DIR; returns the error to report for it, which
    /// also says so when the file could not be put back (it stays in `taken/`, handed back at the next start).
    private func putBack(_ file: OwnershipGuard.HeldFile, after error: SyncError) -> SyncError {
        do {
            try storage.ownership.putBack(file)
            return error
        } catch let back {
            return SyncError(.system, "\(error.message); and it could not be put back (it is handed back at the next start): \(back.message)")
        }
    }

    /// What a removal's turn did with a file: all it needed (`done`), or took it, for an unlink off the silo, with
    /// the row that recorded it then.
    private enum Taken {
        case done(Removal)
        case held(OwnershipGuard.HeldFile, row: IndexEntry)
    }

    /// A file a removal took and unlinks off the silo: its key's position in the page, and the row it had.
    private struct HeldForRemoval {
        let position: Int
        let file: OwnershipGuard.HeldFile
        let row: IndexEntry
    }

    /// The turn's part of a removal, once `verdict` was found off the silo: the row is read again (reentrancy: it may
    /// have been replaced or removed while the file was looked at), then the file is taken if it is still the agent's
    /// intact file, or its row forgotten (or kept, `keepDamaged`) when there is nothing to unlink.
    private func take(_ key: AssetKey, entry: IndexEntry, verdict: FileInspector.FileVerdict, keepDamaged: Bool) throws(SyncError) -> Taken {
        guard let now = try index.entry(for: key), now.sha256 == entry.sha256 else { return .done(Removal()) }
        let name = entry.name
        switch verdict {
        case .trusted, .verified:
            guard let identity = now.identity, let fingerprint = now.fingerprint else {
                if keepDamaged { return .done(Removal(keptRow: true)) }
                break  // verified, but changed while it was read: not known to be the agent's as it is
            }
            switch try storage.ownership.takeForRemoval(name, own: identity, expected: fingerprint) {
            case .held(let file): return .held(file, row: now)
            case .absent: break
            case .kept(let movedAside):
                if let movedAside { log.movedAside(key, name: name, to: movedAside) }
                if keepDamaged { return .done(Removal(keptRow: true)) }
            }
        case .damaged(.missing): break
        case .damaged(.corrupt):
            if keepDamaged { return .done(Removal(keptRow: true)) }
        case .changedMeanwhile:
            return .done(Removal())  // released (something that is not a file took the path) or the row changed
        }
        try index.remove(named: name)
        return .done(Removal())
    }

    /// The last turn of a removal: the rows of the files unlinked are forgotten where they are still the rows the
    /// files were taken with (reentrancy: a fetch may have put a new file at the emptied path meanwhile, whose row
    /// stays; its identity alone would not tell, as the file system may give it the unlinked file's inode, but
    /// its fingerprint's times differ); a file that could not be unlinked goes back, keeping its row.
    private func forgetUnlinked(
        _ held: [HeldForRemoval], _ unlinked: [Int32?], keys: [AssetKey],
        into results: inout [Result<Removal, SyncError>]
    ) {
        for (file, failure) in zip(held, unlinked) {
            guard let code = failure else { continue }
            let error = SyncError.system("unlink", path: file.file.path, errno: code, hint: "cannot remove the asset")
            results[file.position] = .failure(putBack(file.file, after: error))
        }
        do throws(SyncError) {
            try index.transaction { () throws(SyncError) in
                for (file, failure) in zip(held, unlinked) where failure == nil {
                    results[file.position] = Result { () throws(SyncError) in
                        if let now = try index.entry(for: keys[file.position]), now.identity == file.row.identity,
                            now.fingerprint == file.row.fingerprint
                        {
                            try index.remove(named: now.name)
                        }
                        return Removal(bytes: file.row.size)
                    }
                }
            }
        } catch {
            // The files are gone, their rows stay: a missing file, which the next look at it forgets or repairs.
            for (file, failure) in zip(held, unlinked) where failure == nil { results[file.position] = .failure(error) }
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
