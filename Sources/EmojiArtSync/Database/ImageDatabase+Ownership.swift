import FoundationEssentials
import Logging

/// Which files are the agent's, removing them, and paths someone else took.
extension ImageDatabase {
    /// The key recorded for file `name`, if the agent owns it.
    public func ownedKey(forFileNamed name: String) throws(SyncError) -> AssetKey? {
        try index.entry(named: name).flatMap { try? AssetKey(indexedURL: $0.key, fileName: $0.name) }
    }

    /// Every key the agent owns a file for. Walks the index: for polls and purges, not per access.
    public func ownedKeys() throws(SyncError) -> [AssetKey] {
        try index.allEntries().compactMap { try? AssetKey(indexedURL: $0.key, fileName: $0.name) }.sorted()
    }

    /// The names of every file the agent owns. Walks the index.
    public func ownedFileNames() throws(SyncError) -> [String] {
        try index.allEntries().map(\.name)
    }

    /// How many files the agent owns.
    public var ownedCount: Int { index.count }

    /// Removes the agent's file for `key` (only if it is still the file the agent wrote, with the bytes it wrote)
    /// and forgets it. Anything else at the path is left in place (put back if it was taken) and the path stops
    /// being the agent's. Returns the bytes removed.
    @discardableResult
    public func removeOwnedFile(for key: AssetKey) async throws(SyncError) -> Int {
        try await removeOwnedFile(for: key, keepingRowOfDamagedFile: false).bytes
    }

    /// `removeOwnedFile(for:)`; with `keepingRowOfDamagedFile`, a path whose file is damaged or not the agent's
    /// keeps its row (a purge: the fetch that follows repairs it as a repair would, moving a person's file
    /// aside). Throws, changing nothing, when the file or the index cannot be looked at.
    ///
    /// The decision (the file is intact) is made first; then the `OwnershipGuard` takes the file out of DIR and
    /// unlinks it only if it is still that file: one swapped in meanwhile is put back.
    func removeOwnedFile(
        for key: AssetKey, keepingRowOfDamagedFile keepDamaged: Bool
    ) async throws(SyncError) -> (bytes: Int, keptRow: Bool) {
        guard let entry = try index.entry(for: key) else { return (0, false) }
        let name = entry.name
        let verdict = try await check(entry)
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
                if let movedAside { noteMovedAside(key, name: name, to: movedAside) }
                if keepDamaged { return (0, true) }
            }
        case .damaged(.missing): break
        case .damaged(.corrupt):
            if keepDamaged { return (0, true) }
        case .changedMeanwhile:
            return (0, false)  // released (something that is not a file took the path) or the row changed
        }
        try index.remove(named: name)
        if feedKeySet.contains(key) { storedInFeed -= 1 }
        changes.ring()
        return (bytes, false)
    }

    /// The book's `clear()`: removes every file the agent wrote (those still intact) and their rows; a path
    /// whose file is damaged or someone else's keeps its row, for the fetch that follows to repair, and a file
    /// stored while it runs keeps its row. Returns how many files and bytes were removed.
    public func clear() async throws -> (files: Int, bytes: Int) {
        var files = 0
        var bytes = 0
        for key in try ownedKeys() {
            let removed = try await removeOwnedFile(for: key, keepingRowOfDamagedFile: true).bytes
            if removed > 0 {
                files += 1
                bytes += removed
            }
        }
        // Rows of files stored while this ran (their keys were fetched during the awaits above) stay: those
        // files are the agent's, and dropping their rows would leave them looking like the user's.
        try index.forgetUnusableAnswers()
        changes.ring()
        try await makeDurable()
        return (files, bytes)
    }

    /// A file at `name` that was not the agent's was kept beside it, as `aside`: logged (a warning: a person
    /// finds their file under a new name) and shown by `status`.
    func noteMovedAside(_ key: AssetKey, name: String, to aside: String) {
        conflicts += 1
        lastMovedAside = AgentStatus.MovedAside(file: name, movedTo: aside, at: Date())
        changes.ring()
        logger.warning("a file the agent did not write was at an asset path; kept under a new name", metadata: [
            "event": "conflict", "key": .string(key.rawValue), "path": .string(directory.path(ofAsset: name)),
            "moved_to": .string(directory.path(ofAsset: aside)),
        ])
    }

    /// The agent's file at `name` was replaced by something it must never open or write (a FIFO, directory,
    /// socket, device or symbolic link): the file is gone and the path is not the agent's any more. Forgets
    /// the record and reports the conflict (once per occupant); later accesses fetch nothing for it.
    func releaseTakenPath(_ name: String) throws(SyncError) {
        guard let entry = try index.entry(named: name) else { return }
        try index.remove(named: name)
        guard let key = try? AssetKey(indexedURL: entry.key, fileName: entry.name) else { return }
        if feedKeySet.contains(key) { storedInFeed -= 1 }
        changes.ring()
        // Reported now (once, through the ledger): the path is someone else's until they free it.
        let path = directory.path(ofAsset: name)
        let occupant = try storage.status.occupant(at: path)
        _ = conflict(key, path: path, what: occupant.refusal(owned: false) ?? "not a regular file", occupant: occupant)
    }

    /// Throws the (once-logged) conflict when the path of `key` holds something the agent may not write.
    /// `owned`: the index has a row for `key` (the caller looked it up in this turn of the silo). One `lstat`;
    /// throws its error when it fails (a path that cannot be looked at is not taken, nor free).
    func refuseTakenPath(_ key: AssetKey, owned: Bool) throws(SyncError) {
        let path = directory.path(ofAsset: AssetFileName.name(for: key))
        let occupant = try storage.status.occupant(at: path)
        if let refusal = occupant.refusal(owned: owned) {
            throw conflict(key, path: path, what: refusal, occupant: occupant)
        }
    }

    func conflict(_ key: AssetKey, path: String, what: String, occupant: PathOccupant) -> SyncError {
        if conflictLedger.note(path: path, occupant: "\(what) \(occupant.identity)") {
            conflicts += 1
            logger.warning("path taken, left untouched", metadata: [
                "event": "conflict", "key": .string(key.rawValue), "path": .string(path), "reason": .string(what),
            ])
        }
        return SyncError(
            .conflict, "\(path) is \(what); left untouched (move it away to let the agent store \(key))", path: path)
    }
}
