import EmojiArtPNG
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Looking at owned files: trusted by their fingerprint, or read, hashed and parsed off the silo.
extension ImageDatabase {
    /// Why a recorded file could not be used.
    public enum DamageReason: String, Sendable, Error {
        case missing, corrupt
    }

    /// The state of an owned file, as a watcher or a rescan needs it.
    public enum FileCheck: Sendable, Equatable {
        /// Not a file the agent owns (the user's, or unknown): nothing to do.
        case notOwned
        case intact
        case damaged(DamageReason)
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

    /// Checks the file `name` against the index: a cheap `lstat` when its fingerprint is the recorded one, a
    /// hash off the actor otherwise. Throws when the index cannot be read.
    public func check(fileNamed name: String) async throws(SyncError) -> FileCheck {
        guard let entry = try index.entry(named: name) else { return .notOwned }
        switch try await check(entry) {
        case .trusted, .verified: return .intact
        case .damaged(let reason): return .damaged(reason)
        case .changedMeanwhile: return .notOwned
        }
    }

    /// Reads and hashes the file `name` whatever its fingerprint says: the scrub, which catches bit rot that
    /// left the fingerprint alone. A damaged file loses its fingerprint, so every later look reads it too.
    public func scrub(fileNamed name: String) async throws(SyncError) -> FileCheck {
        guard var entry = try index.entry(named: name) else { return .notOwned }
        entry.fingerprint = nil
        switch try await check(entry) {
        case .trusted, .verified: return .intact
        case .damaged(let reason): return .damaged(reason)
        case .changedMeanwhile: return .notOwned
        }
    }

    /// Looks at the file of `entry`: one `lstat` when its fingerprint is the recorded one, a read, hash and
    /// structure check off the actor otherwise.
    func check(_ entry: IndexEntry) async throws(SyncError) -> FileVerdict {
        let name = entry.name
        let path = directory.path(ofAsset: name)
        switch FileState.of(path) {
        case .absent: return .damaged(.missing)
        case .symbolicLink, .other:
            // Someone put a link, FIFO, socket or directory there: it is theirs now, never opened or replaced.
            try releaseTakenPath(name)
            return .changedMeanwhile
        case .regular(let size) where size != entry.size: return .damaged(.corrupt)
        case .regular: break
        }
        let fingerprint = FileFingerprint.of(path)
        if let fingerprint, fingerprint == entry.fingerprint { return .trusted }
        guard let key = try? AssetKey(indexedURL: entry.key, fileName: entry.name) else { return .damaged(.corrupt) }
        let verdict = await Self.verifyFile(at: path, key: key, expectedDigest: entry.sha256)
        filesRead += 1
        // Reentrancy: a purge or another write may have changed the row while we read.
        guard let now = try index.entry(named: name), now.key == entry.key, now.sha256 == entry.sha256 else {
            return .changedMeanwhile
        }
        switch verdict {
        case .success(let asset):
            // Only a file that did not change while it was read earns the fingerprint.
            if let fingerprint, FileFingerprint.of(path) == fingerprint {
                try index.setFingerprint(fingerprint, named: name)
            }
            return .verified(asset)
        case .failure(let reason):
            if now.fingerprint != nil { try index.setFingerprint(nil, named: name) }
            return .damaged(reason)
        }
    }

    /// Reads a file and checks it against the recorded digest and as a PNG, on the blocking-I/O pool.
    private nonisolated static func verifyFile(
        at path: String, key: AssetKey, expectedDigest: String
    ) async -> Result<Asset, DamageReason> {
        await BlockingIO.run { verifyFileNow(at: path, key: key, expectedDigest: expectedDigest) }
    }

    private nonisolated static func verifyFileNow(
        at path: String, key: AssetKey, expectedDigest: String
    ) -> Result<Asset, DamageReason> {
        let bytes: [UInt8]
        do {
            bytes = try DiskStorage.readFile(at: path)
        } catch {
            return .failure(error.errnoValue == ENOENT ? .missing : .corrupt)
        }
        let digest = Asset.digest(bytes)
        guard digest == expectedDigest, let info = try? PNGValidator.validate(bytes, level: .structure) else {
            return .failure(.corrupt)
        }
        return .success(Asset(key: key, bytes: bytes, sha256: digest, width: info.width, height: info.height))
    }
}
