import EmojiArtPNG
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The persistent image cache: memory, then disk, then network, and the ledger of what the agent wrote.
///
/// Owns (in the `SyncActor` silo) the `DiskStorage`, the `Manifest` that is both the stored-images index and
/// the ownership record, and the disk-hit, repair and conflict counters. Every asset access goes through
/// `image(_:)`, which logs exactly one line with `hit=memory|disk|network` (or the failure).
///
/// Rules it keeps:
/// - A disk hit needs a regular file (no symlink followed) whose SHA-256 and size match the manifest and
///   that still parses as a PNG; anything else is re-fetched and logged as `event=repair`.
/// - Files not in the manifest are not the agent's: never modified, moved or deleted. If one sits at an
///   asset's path it is reported as a conflict, unless it is byte-identical to what the server sent, in which
///   case it is adopted without touching it (this is how files written just before a crash, whose manifest
///   record was not yet saved, come back under the agent's care).
/// - New files are written to a temporary file, fsynced, and renamed with `RENAME_NOREPLACE`.
@SyncActor
public final class ImageDatabase {
    public let storage: DiskStorage
    public let loader: ImageLoader
    public let fetcher: AssetFetcher
    private let logger: Logger

    /// The ledger and index. Saved by `flushManifest()`.
    public private(set) var manifest = Manifest()
    private var manifestDirty = false
    /// Fingerprints of owned files as last written or verified: an unchanged fingerprint needs no re-hash.
    private var fingerprints: [String: FileFingerprint] = [:]

    public private(set) var diskHits = 0
    public private(set) var networkFetches = 0
    public private(set) var bytesFetched = 0
    public private(set) var repairs = 0
    public private(set) var conflicts = 0

    public init(directory: SyncDirectory, loader: ImageLoader, fetcher: AssetFetcher, logger: Logger) {
        self.storage = DiskStorage(directory: directory)
        self.loader = loader
        self.fetcher = fetcher
        self.logger = logger
    }

    public var directory: SyncDirectory { storage.directory }

    /// Creates the directories, removes stale temporary files and loads the manifest.
    public func setUp() throws(SyncError) {
        try directory.prepare()
        let (loaded, warning) = Manifest.load(from: directory.manifestPath)
        if let warning {
            logger.warning("manifest reset", metadata: ["event": "manifest", "reason": .string(warning)])
        }
        manifest = loaded
        logger.info("database ready", metadata: [
            "event": "setup", "dir": .string(directory.root), "files": .stringConvertible(manifest.files.count),
        ])
    }

    /// Whether the agent has a recorded file for `key` (the book's `storedImagesIndex.contains`).
    public func isStored(_ key: AssetKey) -> Bool {
        manifest.files[AssetFileName.name(for: key)]?.key == key.rawValue
    }

    /// The asset for `key`, from memory, disk or network, logged as one `event=asset` line. The line is
    /// written where the work happened: by the access that read the disk or the network (before anyone
    /// waiting on it resumes), or here for memory hits.
    public func image(_ key: AssetKey) async throws -> (Asset, Hit) {
        do {
            let (asset, hit) = try await loader.asset(for: key) { [self] in
                try await self.loadBelowMemory(key)
            }
            if hit == .memory { logAccess(key, hit: hit, asset: asset) }
            return (asset, hit)
        } catch {
            logFailure(key, error)
            throw error
        }
    }

    /// Fetches `key` from the network even if memory and disk have it, and stores it: a repair.
    public func refetch(_ key: AssetKey) async throws -> Asset {
        do {
            let (asset, hit) = try await loader.reload(key) { [self] in
                try await self.loadFromNetwork(key)
            }
            if hit == .memory { logAccess(key, hit: hit, asset: asset) }
            return asset
        } catch {
            logFailure(key, error)
            throw error
        }
    }

    // MARK: - Below memory

    private func loadBelowMemory(_ key: AssetKey) async throws -> (Asset, Hit) {
        switch await readFromDisk(key) {
        case .hit(let asset):
            diskHits += 1
            logAccess(key, hit: .disk, asset: asset)
            return (asset, .disk)
        case .notStored:
            break
        case .damaged(let reason):
            noteRepair(of: key, reason: reason)
        }
        return try await loadFromNetwork(key)
    }

    private func loadFromNetwork(_ key: AssetKey) async throws -> (Asset, Hit) {
        let asset = try await fetcher.fetchAsset(key)
        networkFetches += 1
        bytesFetched += asset.bytes.count
        try await store(asset)
        logAccess(key, hit: .network, asset: asset)
        return (asset, .network)
    }

    /// Why a recorded file could not be used.
    public enum DamageReason: String, Sendable, Error {
        case missing, corrupt
    }

    private enum DiskLookup {
        case hit(Asset)
        case notStored
        case damaged(DamageReason)
    }

    private func readFromDisk(_ key: AssetKey) async -> DiskLookup {
        let name = AssetFileName.name(for: key)
        guard let entry = manifest.files[name], entry.key == key.rawValue else { return .notStored }
        switch storage.state(of: name) {
        case .absent: return .damaged(.missing)
        case .symbolicLink, .other: return .damaged(.corrupt)
        case .regular(let size) where size != entry.size: return .damaged(.corrupt)
        case .regular: break
        }
        let path = directory.path(ofAsset: name)
        let verdict = await Self.verifyFile(at: path, key: key, expectedDigest: entry.sha256)
        // Reentrancy: a purge or another write may have changed the record while we read.
        guard manifest.files[name] == entry else { return .notStored }
        switch verdict {
        case .success(let asset):
            fingerprints[name] = FileFingerprint.of(path)
            return .hit(asset)
        case .failure(let reason):
            fingerprints[name] = nil
            return .damaged(reason)
        }
    }

    /// Reads a file and checks it against the recorded digest and as a PNG. Runs off the actor.
    @concurrent
    private nonisolated static func verifyFile(
        at path: String, key: AssetKey, expectedDigest: String
    ) async -> Result<Asset, DamageReason> {
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

    // MARK: - Writing

    /// Puts a fetched asset at its path, if the path is the agent's to write. Throws a `.conflict` error
    /// when it is not, leaving whatever is there untouched.
    private func store(_ asset: Asset) async throws {
        let name = AssetFileName.name(for: asset.key)
        let path = directory.path(ofAsset: name)
        let owned = manifest.files[name]?.key == asset.key.rawValue
        var replacing = false
        switch storage.state(of: name) {
        case .absent:
            replacing = false
        case .regular:
            if owned {
                replacing = true
            } else {
                try await adoptOrRefuse(asset, name: name, path: path)
                return
            }
        case .symbolicLink:
            throw conflict(asset.key, path: path, what: "a symbolic link")
        case .other:
            throw conflict(asset.key, path: path, what: "not a regular file")
        }
        let temporary = try await DiskStorage.writeTemporaryFile(asset.bytes, in: directory.temporaryDirectory)
        switch try storage.install(temporaryFile: temporary, as: name, replacing: replacing) {
        case .installed:
            manifest.files[name] = Manifest.Entry(key: asset.key.rawValue, size: asset.bytes.count, sha256: asset.sha256)
            fingerprints[name] = FileFingerprint.of(path)
            manifestDirty = true
        case .occupied:
            try await adoptOrRefuse(asset, name: name, path: path)
        }
    }

    private func adoptOrRefuse(_ asset: Asset, name: String, path: String) async throws {
        let existing = await Self.digestOfFile(at: path)
        guard existing == asset.sha256, case .regular = storage.state(of: name) else {
            throw conflict(asset.key, path: path, what: "a file the agent did not write")
        }
        manifest.files[name] = Manifest.Entry(key: asset.key.rawValue, size: asset.bytes.count, sha256: asset.sha256)
        fingerprints[name] = FileFingerprint.of(path)
        manifestDirty = true
        logger.info("adopted identical file", metadata: [
            "event": "adopt", "key": .string(asset.key.rawValue), "file": .string(name),
        ])
    }

    @concurrent
    private nonisolated static func digestOfFile(at path: String) async -> String? {
        guard let bytes = try? DiskStorage.readFile(at: path) else { return nil }
        return Asset.digest(bytes)
    }

    private func conflict(_ key: AssetKey, path: String, what: String) -> SyncError {
        conflicts += 1
        logger.warning("path taken, left untouched", metadata: [
            "event": "conflict", "key": .string(key.rawValue), "path": .string(path), "reason": .string(what),
        ])
        return SyncError(
            .conflict, "\(path) is \(what); left untouched (move it away to let the agent store \(key))", path: path)
    }

    /// Saves the manifest if it changed, then flushes the directory's entries to disk.
    public func flushManifest() async throws {
        guard manifestDirty else { return }
        manifestDirty = false
        let snapshot = manifest
        do {
            try await snapshot.save(to: directory.manifestPath, temporaryDirectory: directory.temporaryDirectory)
            storage.syncDirectory()
        } catch {
            manifestDirty = true
            throw error
        }
    }

    /// Counts and logs a repair (`event=repair reason=missing|corrupt`), before its `hit=network` line.
    public func noteRepair(of key: AssetKey, reason: DamageReason) {
        repairs += 1
        fetcher.metrics.repair(reason.rawValue)
        logger.info("re-fetching damaged asset", metadata: [
            "event": "repair", "reason": .string(reason.rawValue), "key": .string(key.rawValue),
            "file": .string(AssetFileName.name(for: key)),
        ])
    }

    // MARK: - Checking and removing owned files

    /// The state of an owned file, as a watcher or a rescan needs it.
    public enum FileCheck: Sendable, Equatable {
        /// Not a file the agent owns (the user's, or unknown): nothing to do.
        case notOwned
        case intact
        case damaged(DamageReason)
    }

    /// Checks the file `name` against the manifest: a cheap `lstat` when its fingerprint is the one recorded,
    /// a hash off the actor otherwise.
    public func check(fileNamed name: String) async -> FileCheck {
        guard let entry = manifest.files[name], let key = try? AssetKey(feedURL: entry.key) else { return .notOwned }
        let path = directory.path(ofAsset: name)
        switch storage.state(of: name) {
        case .absent: return .damaged(.missing)
        case .symbolicLink, .other: return .damaged(.corrupt)
        case .regular(let size) where size != entry.size: return .damaged(.corrupt)
        case .regular: break
        }
        let fingerprint = FileFingerprint.of(path)
        if let fingerprint, fingerprints[name] == fingerprint { return .intact }
        let verdict = await Self.verifyFile(at: path, key: key, expectedDigest: entry.sha256)
        guard manifest.files[name] == entry else { return .notOwned }  // changed while we hashed
        switch verdict {
        case .success:
            fingerprints[name] = fingerprint
            return .intact
        case .failure(let reason):
            fingerprints[name] = nil
            return .damaged(reason)
        }
    }

    /// The key recorded for file `name`, if the agent owns it.
    public func ownedKey(forFileNamed name: String) -> AssetKey? {
        manifest.files[name].flatMap { try? AssetKey(feedURL: $0.key) }
    }

    /// Every key the agent owns a file for.
    public var ownedKeys: [AssetKey] {
        manifest.files.values.compactMap { try? AssetKey(feedURL: $0.key) }.sorted()
    }

    /// Removes the agent's file for `key` (only if its bytes are still what the agent wrote) and forgets it.
    /// A file changed by someone else is left in place and simply stops being the agent's.
    @discardableResult
    public func removeOwnedFile(for key: AssetKey) async throws -> Int {
        let name = AssetFileName.name(for: key)
        guard let entry = manifest.files[name], entry.key == key.rawValue else { return 0 }
        let removable = await check(fileNamed: name) == .intact
        guard manifest.files[name] == entry else { return 0 }
        manifest.files[name] = nil
        fingerprints[name] = nil
        manifestDirty = true
        if removable, try storage.remove(name) { return entry.size }
        return 0
    }

    /// The book's `clear()`: removes every file the agent wrote (those still intact), empties the index.
    /// Returns how many files and bytes were removed.
    public func clear() async throws -> (files: Int, bytes: Int) {
        var files = 0
        var bytes = 0
        for key in ownedKeys {
            let removed = try await removeOwnedFile(for: key)
            if removed > 0 {
                files += 1
                bytes += removed
            }
        }
        manifest.files.removeAll()
        fingerprints.removeAll()
        manifestDirty = true
        try await flushManifest()
        return (files, bytes)
    }

    // MARK: - Logging

    private func logAccess(_ key: AssetKey, hit: Hit, asset: Asset) {
        fetcher.metrics.hit(hit)
        logger.info("asset", metadata: [
            "event": "asset", "key": .string(key.rawValue), "hit": .string(hit.rawValue),
            "bytes": .stringConvertible(asset.bytes.count), "file": .string(AssetFileName.name(for: key)),
        ])
    }

    private func logFailure(_ key: AssetKey, _ error: any Error) {
        var metadata: Logger.Metadata = [
            "event": "asset", "key": .string(key.rawValue), "result": "failed", "error": .string(String(describing: error)),
        ]
        if error is ImageLoader.RememberedFailure { metadata["remembered"] = "true" } else { fetcher.metrics.failure(error) }
        logger.warning("asset unavailable", metadata: metadata)
    }
}
