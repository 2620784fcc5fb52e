import EmojiArtPNG
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Why a recorded file could not be used.
public enum DamageReason: String, Sendable, Error {
    case missing, corrupt
}

/// The state of an owned file, as a watcher, a rescan or a scrub needs it.
public enum FileCheck: Sendable, Equatable {
    /// Not a file the agent owns (the user's, or unknown): nothing to do.
    case notOwned
    case intact
    case damaged(DamageReason)
}

/// Looks at the agent's files: trusted by their `lstat` fingerprint, or read, hashed and parsed off the silo. A
/// file that holds exactly the agent's bytes under another identity, with one name, is adopted (its identity
/// recorded); a path someone filled with a link, FIFO or directory is released (its row forgotten, the conflict
/// reported).
///
/// Owns no state of its own: it reads and records fingerprints in the index, and reports to the `AccessLog`.
@SyncActor
final class FileInspector {
    private let index: AssetIndex
    private let directory: SyncDirectory
    private let status: PathStatus
    private let log: AccessLog

    init(index: AssetIndex, directory: SyncDirectory, status: PathStatus, log: AccessLog) {
        self.index = index
        self.directory = directory
        self.status = status
        self.log = log
    }

    /// Checks the file `name` against the index: a cheap `lstat` when its fingerprint is the recorded one, a
    /// hash off the actor otherwise. Throws when the index cannot be read.
    func check(fileNamed name: String) async throws(SyncError) -> FileCheck {
        guard let entry = try index.entry(named: name) else { return .notOwned }
        switch try await check(entry) {
        case .trusted, .verified: return .intact
        case .damaged(let reason): return .damaged(reason)
        case .changedMeanwhile: return .notOwned
        }
    }

    /// Reads and hashes the file `name` whatever its fingerprint says: the scrub, which catches bit rot that
    /// left the fingerprint alone. A damaged file loses its fingerprint, so every later look reads it too.
    func scrub(fileNamed name: String) async throws(SyncError) -> FileCheck {
        guard var entry = try index.entry(named: name) else { return .notOwned }
        entry.fingerprint = nil
        switch try await check(entry) {
        case .trusted, .verified: return .intact
        case .damaged(let reason): return .damaged(reason)
        case .changedMeanwhile: return .notOwned
        }
    }

    /// What a look at an owned file found.
    enum FileVerdict {
        /// Its fingerprint is the recorded one: good without reading it.
        case trusted
        /// Read, hashed and parsed: good (its new fingerprint is recorded).
        case verified(Asset)
        case damaged(DamageReason)
        /// The row changed while the file was being read (a purge, a repair): nothing can be said.
        case changedMeanwhile
    }

    /// Looks at the file of `entry`: one `lstat` when its fingerprint is the recorded one, a read, hash and
    /// structure check off the actor otherwise. A regular file that is not the one the agent wrote (another
    /// identity) is damaged unless it holds exactly the agent's bytes and has one name, in which case it is
    /// adopted (its identity recorded): the repair of a damaged one moves it aside (`OwnershipGuard`). Throws
    /// when the index cannot be read, or when the file cannot be looked at (`EACCES`, `EIO`): nothing is decided
    /// from a failed look, and the row stays.
    func check(_ entry: IndexEntry) async throws(SyncError) -> FileVerdict {
        let name = entry.name
        let path = directory.path(ofAsset: name)
                guard let info = try status.status(of: path) else { return .damaged(.missing) }
        guard let fingerprint = info.fingerprint else {
            // Someone put a link, FIFO, socket or directory there: it is theirs now, never opened or replaced.
            try releaseTakenPath(name)
            return .changedMeanwhile
        }
        if fingerprint == entry.fingerprint { return .trusted }
        if Int(fingerprint.size) != entry.size { return .damaged(.corrupt) }
        guard let key = try? AssetKey(indexedURL: entry.key, fileName: entry.name) else { return .damaged(.corrupt) }
        let verdict = await Self.verifyFile(at: path, key: key, expectedDigest: entry.sha256)
        log.fileRead()
        // Reentrancy: a purge or another write may have changed the row while we read.
        guard let now = try index.entry(named: name), now.key == entry.key, now.sha256 == entry.sha256 else {
            return .changedMeanwhile
        }
        switch verdict {
        case .good(let asset):
            let ours = fingerprint.identity == now.identity
            // Only a file that did not change while it was read earns the fingerprint; another file with the
            // agent's bytes is adopted only if it has no other name (a hard link to someone's file is theirs).
            guard let after = try status.status(of: path), after.fingerprint == fingerprint,
                ours || after.links <= 1
            else {
                return ours ? .verified(asset) : .damaged(.corrupt)
            }
            if ours {
                try index.setFingerprint(fingerprint, of: now)
            } else {
                try index.adopt(fingerprint, of: now)
            }
            return .verified(asset)
        case .damaged(let reason):
            if now.fingerprint != nil { try index.setFingerprint(nil, of: now) }
            return .damaged(reason)
        case .unreadable(let error):
            throw error
        }
    }

    /// What reading a file found.
    private enum ReadVerdict: Sendable {
        case good(Asset)
        case damaged(DamageReason)
        /// The file could not be read (`EACCES`, `EIO`): nothing can be said of its bytes.
        case unreadable(SyncError)
    }

    /// Reads a file and checks it against the recorded digest and as a PNG, on the blocking-I/O pool, through fixed
    /// buffers (`CheckedFile`): a file of any size is checked, never held in memory, and the asset it answers carries
    /// no bytes.
    private nonisolated static func verifyFile(at path: String, key: AssetKey, expectedDigest: String) async -> ReadVerdict {
        await BlockingIO.run { verifyFileNow(at: path, key: key, expectedDigest: expectedDigest) }
    }

    private nonisolated static func verifyFileNow(at path: String, key: AssetKey, expectedDigest: String) -> ReadVerdict {
        let file: CheckedFile
        do {
            file = try CheckedFile.read(at: path)
        } catch {
            if error.errnoValue == ENOENT { return .damaged(.missing) }
            // Not a regular file any more, or not a PNG: damaged. A failed system call: unknown.
            return error.code == .system ? .unreadable(error) : .damaged(.corrupt)
        }
        guard file.sha256 == expectedDigest else { return .damaged(.corrupt) }
        return .good(Asset(streamed: key, size: file.size, sha256: file.sha256, width: file.info.width, height: file.info.height))
    }

    /// The agent's file at `name` was replaced by something it must never open or write (a FIFO, directory,
    /// socket, device or symbolic link): the file is gone and the path is not the agent's any more. Forgets
    /// the record and reports the conflict (once per occupant); later accesses fetch nothing for it.
    private func releaseTakenPath(_ name: String) throws(SyncError) {
        guard let entry = try index.entry(named: name) else { return }
        try index.remove(named: name)
        guard let key = try? AssetKey(indexedURL: entry.key, fileName: entry.name) else { return }
        // Reported now (once, through the ledger): the path is someone else's until they free it.
        let path = directory.path(ofAsset: name)
        let occupant = try status.occupant(at: path)
        _ = log.conflict(key, path: path, what: occupant.refusal(owned: false) ?? "not a regular file", occupant: occupant)
    }
}
