import FoundationEssentials
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Putting fetched bytes at their path: a temporary file written off the silo, then the group commit, or the
/// adoption of an identical file that is already there.
extension ImageDatabase {
    /// Puts a fetched asset at its path (a refresh whose bytes changed): written to a temporary file off the
    /// silo, then committed (`commit(_:tag:)`).
    func store(_ asset: Asset, tag: String?, validators: HTTPValidators) async throws {
        guard let bytes = asset.bytes else { return }  // a trusted disk copy is already in place
        try refuseTakenPath(asset.key, owned: try isStored(asset.key))  // before writing anything
        let temporary = try await DiskStorage.writeTemporaryFile(bytes, in: directory.temporaryDirectory)
        try await commit(StagedAsset(asset: asset, validators: validators, temporaryPath: temporary), tag: tag)
    }

    /// Puts a staged asset at its path, if the path is the agent's to write. Throws a `.conflict` error when it
    /// is not, leaving whatever is there untouched. Returns once the file is durable and recorded.
    ///
    /// Whether the path is the agent's is decided by the committer, in the silo, from what is there at the moment
    /// of the rename, because a purge, a repair or the user may have changed it since the fetch was decided.
    func commit(_ staged: StagedAsset, tag: String?) async throws {
        let asset = staged.asset
        let name = AssetFileName.name(for: asset.key)
        let path = directory.path(ofAsset: name)
        let validators = staged.validators
        let entry = IndexEntry(
            name: name, key: asset.key.rawValue, size: asset.size, sha256: asset.sha256, tag: tag,
            etag: validators.etag, lastModified: validators.lastModified)
        switch try await committer.commit(GroupCommitter.PendingFile(temporaryPath: staged.temporaryPath, entry: entry)) {
        case .installed(let isNew, let movedAside):
            noteRecorded(asset.key, isNew: isNew)
            conflictLedger.clear(path: path)
            if let movedAside { noteMovedAside(asset.key, name: name, to: movedAside) }
        case .occupiedByForeignFile:
            try await adoptOrRefuse(asset, name: name, path: path, tag: tag, validators: validators)
        case .refused(let refusal):
            throw conflict(asset.key, path: path, what: refusal, occupant: try storage.status.occupant(at: path))
        }
    }

    /// Counts a row that was written for `key`.
    func noteRecorded(_ key: AssetKey, isNew: Bool) {
        if isNew, feedKeySet.contains(key) { storedInFeed += 1 }
        changes.ring()
    }

    /// A regular file the agent did not write sits at the path: adopted when it holds exactly the bytes the
    /// server sent and did not change while it was read (fingerprint taken before the read, compared after), a
    /// conflict otherwise. A file swapped in during the read is never recorded as the agent's.
    func adoptOrRefuse(
        _ asset: Asset, name: String, path: String, tag: String?, validators: HTTPValidators
    ) async throws {
        let status = storage.status
        let before = try status.occupant(at: path)
        if let refusal = before.refusal(owned: false) {
            throw conflict(asset.key, path: path, what: refusal, occupant: before)
        }
        let fingerprint = try status.fingerprint(of: path)
        let existing = await Self.digestOfFile(at: path, hooks: status.hooks)
        // Reentrancy: the file may have been swapped, linked or changed while it was read.
        let after = try status.occupant(at: path)
        guard let fingerprint, existing == asset.sha256, try status.fingerprint(of: path) == fingerprint,
            after.refusal(owned: false) == nil
        else {
            throw conflict(asset.key, path: path, what: "a file the agent did not write", occupant: after)
        }
        // Another access may have recorded the path meanwhile: then it is the agent's already.
        if try index.entry(named: name) == nil {
            let isNew = try index.put(IndexEntry(
                name: name, key: asset.key.rawValue, size: asset.size, sha256: asset.sha256, tag: tag,
                etag: validators.etag, lastModified: validators.lastModified, fingerprint: fingerprint))
            noteRecorded(asset.key, isNew: isNew)
        }
        logger.info("adopted identical file", metadata: [
            "event": "adopt", "key": .string(asset.key.rawValue), "file": .string(name),
        ])
    }

    private nonisolated static func digestOfFile(at path: String, hooks: AgentTestHooks?) async -> String? {
        await BlockingIO.run {
            defer { hooks?.runAfterAdoptionRead(path) }
            guard let bytes = try? DiskStorage.readFile(at: path) else { return nil }
            return Asset.digest(bytes)
        }
    }
}
