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
enum FileCheck: Sendable, Equatable {
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
    enum FileVerdict: Sendable {
        /// Its fingerprint is the recorded one: good without reading it.
        case trusted
        /// Read, hashed and parsed: good (its new fingerprint is recorded).
        case verified(Asset)
        case damaged(DamageReason)
        /// The row changed while the file was being read (a purge, a repair): nothing can be said.
        case changedMeanwhile
    }

    /// Looks at the file of `entry` and records what it found (`examine`, then `record`): one `lstat` when its
    /// fingerprint is the recorded one, a read, hash and structure check otherwise, all off the actor. A regular file
    /// that is not the one the agent wrote (another identity) is damaged unless it holds exactly the agent's bytes and
    /// has one name, in which case it is adopted (its identity recorded): the repair of a damaged one moves it aside
    /// (`OwnershipGuard`). Throws when the index cannot be read, or when the file cannot be looked at (`EACCES`,
    /// `EIO`): nothing is decided from a failed look, and the row stays.
    /// `key`: the key the file is of, when the caller has it (else one is made from the row).
    func check(_ entry: IndexEntry, key: AssetKey? = nil) async throws(SyncError) -> FileVerdict {
        let examination = try await examine(entry, key: key)
        if let change = examination.change { try record(change) }
        return examination.verdict
    }

    /// `check` of many files at once, each with the key it is the file of: their looks in one job off the actor,
    /// their rows read again in one read transaction, what they found recorded in one write transaction (none when
    /// there is nothing to record, as for a deleted file). A verdict per file, in order; a file that could not be
    /// looked at has its error, and when the index cannot be read or written every file has that error (nothing
    /// was recorded).
    /// What a pass does with the files of a batch whose fingerprints changed (a copy of DIR, a restore from a
    /// backup: 90,000 of them, each its own job and transaction before).
    func check(_ files: [(entry: IndexEntry, key: AssetKey)]) async -> [Result<FileVerdict, SyncError>] {
        let paths = files.map { directory.path(ofAsset: $0.entry.name) }
        let status = status
        let looks = await BlockingIO.run {
            zip(files, paths).map { file, path in Self.look(at: path, entry: file.entry, key: file.key, status: status) }
        }
        var results: [Result<FileVerdict, SyncError>] = []
        results.reserveCapacity(files.count)
        var changes: [IndexChange] = []
        do {
            // One silo turn, no suspension between the reads and the writes: what was decided still holds.
            try index.readTransaction { () throws(SyncError) in
                for (file, look) in zip(files, looks) {
                    if let failure = look.failure {
                        results.append(.failure(failure))  // this file could not be looked at; the others go on
                        continue
                    }
                    let examination = try decide(look, of: file.entry)
                    if let change = examination.change { changes.append(change) }
                    results.append(.success(examination.verdict))
                }
            }
            if !changes.isEmpty {
                try index.transaction { () throws(SyncError) in
                    for change in changes { try record(change) }
                }
            }
        } catch {
            return files.map { _ in .failure(error) }
        }
        return results
    }

    /// What a look at an owned file decided, and the change of the index that goes with it: `check` records it, a
    /// dry run reports it (`AccessPipeline.preview`).
    struct Examination {
        let verdict: FileVerdict
        let change: IndexChange?
        /// The identity of the regular file the look found at the path (nil: none, or not looked that far), so a
        /// dry run can say whether a repair would move it aside without looking again.
        var found: FileIdentity? = nil
    }

    /// What a look records in the index.
    enum IndexChange: Equatable {
        /// The agent's own file, read and found good: its new fingerprint.
        case fingerprint(FileFingerprint, of: IndexEntry)
        /// Another file with exactly the agent's bytes and one name: from now on the agent's (its status's identity,
        /// with its birth time).
        case adoption(FileFingerprint, identity: FileIdentity, of: IndexEntry)
        /// Damaged: its fingerprint forgotten, so every later look reads it.
        case forgetFingerprint(of: IndexEntry)
        /// A link, FIFO, socket or directory took the path: the row is forgotten, the conflict reported (with the
        /// occupant the look found, so recording it looks at nothing).
        case release(name: String, occupant: PathOccupant)
    }

    /// Decides what `check` finds, writing nothing (see `check`): the look off the actor, the decision in it.
    func examine(_ entry: IndexEntry, key: AssetKey? = nil) async throws(SyncError) -> Examination {
        let path = directory.path(ofAsset: entry.name)
        guard let key = key ?? (try? AssetKey(indexedURL: entry.key, fileName: entry.name)) else {
            return Examination(verdict: .damaged(.corrupt), change: nil)
        }
        let status = status
        let look = await BlockingIO.run { Self.look(at: path, entry: entry, key: key, status: status) }
        return try decide(look, of: entry)
    }

    /// What a look at a file found, off the actor: its `lstat`, and, unless that was the recorded fingerprint,
    /// what reading it found and its `lstat` after the read.
    private enum Look: Sendable {
        case missing
        /// A link, FIFO, socket or directory is at the path.
        case notRegular(PathOccupant)
        case trusted
        case wrongSize(found: FileIdentity)
        /// Read; `found`: the identity of the file the first `lstat` saw; `after`: the file's status once read
        /// (nil: gone meanwhile).
        case read(FileFingerprint, ReadVerdict, found: FileIdentity, after: FileStatus?)
        /// The `lstat` failed (`EACCES`, `EIO`).
        case unreadable(SyncError)

        /// Why the file could not be looked at, if it could not: nothing is decided from such a look.
        var failure: SyncError? {
            switch self {
            case .unreadable(let error), .read(_, .unreadable(let error), _, _): error
            default: nil
            }
        }
    }

    /// Looks at the file of `entry` at `path` (on the blocking-I/O pool: `lstat`s and a read).
    private nonisolated static func look(at path: String, entry: IndexEntry, key: AssetKey, status: PathStatus) -> Look {
        do {
            guard let info = try status.status(of: path) else { return .missing }
            guard let fingerprint = info.fingerprint else { return .notRegular(info.occupant) }
            if fingerprint == entry.fingerprint { return .trusted }
            if Int(fingerprint.size) != entry.size { return .wrongSize(found: info.identity) }
            let verdict = verifyFileNow(at: path, key: key, expectedDigest: entry.sha256)
            guard case .good = verdict else { return .read(fingerprint, verdict, found: info.identity, after: nil) }
            return .read(fingerprint, verdict, found: info.identity, after: try status.status(of: path))
        } catch {
            return .unreadable(error)
        }
    }

    /// What `look` found means for the file of `entry`, in the actor: the row is read again first (a purge or
    /// another write may have changed it while the file was looked at).
    private func decide(_ look: Look, of entry: IndexEntry) throws(SyncError) -> Examination {
        if case .read = look { log.fileRead() }
        if let failure = look.failure { throw failure }
        guard let now = try index.entry(named: entry.name), now.key == entry.key, now.sha256 == entry.sha256 else {
            return Examination(verdict: .changedMeanwhile, change: nil)
        }
        switch look {
        case .unreadable(let error), .read(_, .unreadable(let error), _, _):
            throw error  // `look.failure`, thrown above already
        case .missing:
            return Examination(verdict: .damaged(.missing), change: nil)
        case .notRegular(let occupant):
            // Someone put a link, FIFO, socket or directory there: it is theirs now, never opened or replaced.
            return Examination(verdict: .changedMeanwhile, change: .release(name: entry.name, occupant: occupant))
        case .trusted:
            return Examination(verdict: .trusted, change: nil)
        case .wrongSize(let found):
            return Examination(verdict: .damaged(.corrupt), change: nil, found: found)
        case .read(_, .damaged(let reason), let found, _):
            return Examination(
                verdict: .damaged(reason), change: now.fingerprint != nil ? .forgetFingerprint(of: now) : nil, found: found)
        case .read(let fingerprint, .good(let asset), let found, let after):
            let ours = (after?.identity ?? found) == now.identity
            // Only a file that did not change while it was read earns the fingerprint; another file with the
            // agent's bytes is adopted only if it has no other name (a hard link to someone's file is theirs).
            guard let after, after.fingerprint == fingerprint, ours || after.links <= 1 else {
                return Examination(verdict: ours ? .verified(asset) : .damaged(.corrupt), change: nil, found: found)
            }
            return Examination(
                verdict: .verified(asset),
                change: ours ? .fingerprint(fingerprint, of: now) : .adoption(fingerprint, identity: after.identity, of: now))
        }
    }

    /// Writes what `examine` decided.
    private func record(_ change: IndexChange) throws(SyncError) {
        switch change {
        case .fingerprint(let fingerprint, let entry): try index.setFingerprint(fingerprint, of: entry)
        case .adoption(let fingerprint, let identity, let entry): try index.adopt(fingerprint, identity: identity, of: entry)
        case .forgetFingerprint(let entry): try index.setFingerprint(nil, of: entry)
        case .release(let name, let occupant): try releaseTakenPath(name, occupant: occupant)
        }
    }

    /// What reading a file found.
    private enum ReadVerdict: Sendable {
        case good(Asset)
        case damaged(DamageReason)
        /// The file could not be read (`EACCES`, `EIO`): nothing can be said of its bytes.
        case unreadable(SyncError)
    }

    /// Reads a file and checks it against the recorded digest and as a PNG, through fixed buffers (`CheckedFile`):
    /// a file of any size is checked, never held in memory, and the asset it answers carries no bytes. Blocks: on
    /// the blocking-I/O pool.
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

    /// The agent's file at `name` was replaced by `occupant`, something it must never open or write (a FIFO,
    /// directory, socket, device or symbolic link): the file is gone and the path is not the agent's any more.
    /// Forgets the record and reports the conflict (once per occupant); later accesses fetch nothing for it.
    private func releaseTakenPath(_ name: String, occupant: PathOccupant) throws(SyncError) {
        guard let entry = try index.entry(named: name) else { return }
        try index.remove(named: name)
        guard let key = try? AssetKey(indexedURL: entry.key, fileName: entry.name) else { return }
        // Reported now (once, through the ledger): the path is someone else's until they free it.
        let path = directory.path(ofAsset: name)
        _ = log.conflict(key, path: path, what: occupant.refusal(owned: false) ?? "not a regular file", occupant: occupant)
    }
}
