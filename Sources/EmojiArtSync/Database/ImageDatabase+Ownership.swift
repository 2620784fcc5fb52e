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

    /// Removes the agent's file for `key` (only if its bytes are still what the agent wrote) and forgets it.
    /// A file changed by someone else is left in place and simply stops being the agent's.
    @discardableResult
    public func removeOwnedFile(for key: AssetKey) async throws(SyncError) -> Int {
        guard let entry = try index.entry(for: key) else { return 0 }
        let name = entry.name
        let removable = try await check(fileNamed: name) == .intact
        // Reentrancy: the row may have been replaced or removed while the file was checked.
        guard let now = try index.entry(for: key), now.sha256 == entry.sha256 else { return 0 }
        try index.remove(named: name)
        if feedKeySet.contains(key) { storedInFeed -= 1 }
        changes.ring()
        if removable, try storage.remove(name) { return entry.size }
        return 0
    }

    /// The book's `clear()`: removes every file the agent wrote (those still intact) and their rows; a file stored
    /// while it runs keeps its row. Returns how many files and bytes were removed.
    public func clear() async throws -> (files: Int, bytes: Int) {
        var files = 0
        var bytes = 0
        for key in try ownedKeys() {
            let removed = try await removeOwnedFile(for: key)
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
        let occupant = PathOccupant.at(path)
        _ = conflict(key, path: path, what: occupant.refusal(owned: false) ?? "not a regular file", occupant: occupant)
    }

    /// Throws the (once-logged) conflict when the path of `key` holds something the agent may not write.
    /// `owned`: the index has a row for `key` (the caller looked it up in this turn of the silo). One `lstat`.
    func refuseTakenPath(_ key: AssetKey, owned: Bool) throws(SyncError) {
        let path = directory.path(ofAsset: AssetFileName.name(for: key))
        let occupant = PathOccupant.at(path)
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
