import Foundation
import EmojiArtPNG
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The persistent image cache: memory, then disk, then network, and the ledger of what the agent wrote.
///
/// Owns (in the `SyncActor` silo) the `DiskStorage`, the `AssetIndex` that is both the stored-images index and
/// the ownership record, and the disk-hit, repair and conflict counters. Every asset access goes through
/// `image(_:)`, which logs exactly one line with `hit=memory|disk|network` (or the failure).
///
/// Rules it keeps:
/// - A disk hit needs a regular file (no symlink followed) whose size matches the index and whose `lstat`
///   fingerprint is the one recorded when the agent last wrote or verified it; with another fingerprint, its
///   SHA-256 must match the index and it must still parse as a PNG. Anything else is re-fetched and logged as
///   `event=repair`.
/// - Files not in the index are not the agent's: never modified, moved or deleted. If one sits at an
///   asset's path it is reported as a conflict, unless it is byte-identical to what the server sent, in which
///   case it is adopted without touching it (this is how files written just before a crash, whose index
///   row was not yet committed, come back under the agent's care).
/// - New files are written to a temporary file, fsynced, and renamed with `RENAME_NOREPLACE`.
@SyncActor
public final class ImageDatabase {
    public let storage: DiskStorage
    public let loader: ImageLoader
    public let fetcher: AssetFetcher
    private let logger: Logger

    /// The ledger and index; opened by `setUp()`.
    public private(set) var index: AssetIndex!

    /// Accesses by the layer that served them: one per `event=asset` line, as `emojiart_sync_hits_total`.
    public private(set) var hits: [Hit: Int] = [:]
    /// Bytes of asset bodies received from the gallery, valid or not, as `emojiart_sync_bytes_fetched_total`.
    public nonisolated var bytesFetched: Int { fetcher.receivedBytes.count }
    public private(set) var repairs = 0
    public private(set) var conflicts = 0
    /// Keys of the feed the agent keeps now, and how many of them have a file in the index: kept as rows
    /// change, so `status` costs nothing at any gallery size.
    private var feedKeySet: Set<AssetKey> = []
    /// The feed's tag (`checksum`) per key, recorded with each file stored, compared by `staleKeys()`.
    private var feedTags: [AssetKey: String] = [:]
    public private(set) var storedInFeed = 0
    /// Files fetched again because the feed's tag for them changed, and how many of those had new bytes.
    public private(set) var refreshes = 0
    public private(set) var updates = 0
    /// Rung when anything `status` shows changed; the status writer sleeps on it.
    public nonisolated let changes = Alarm()

    /// Owned files whose bytes were read to verify them (a fingerprint that matched needs no read).
    public private(set) var filesRead = 0
    /// Conflicts already logged: each path is reported once, not once per poll.
    private var conflictLedger = ConflictLedger()

    public init(directory: SyncDirectory, loader: ImageLoader, fetcher: AssetFetcher, logger: Logger) {
        self.storage = DiskStorage(directory: directory)
        self.loader = loader
        self.fetcher = fetcher
        self.logger = logger
    }

    public var directory: SyncDirectory { storage.directory }

    /// Creates the directories and opens the index (rebuilding or importing it when needed).
    public func setUp() throws(SyncError) {
        try directory.prepare()
        let (opened, notice) = try AssetIndex.open(directory: directory)
        if let notice {
            logger.warning("index rebuilt or imported", metadata: ["event": "index", "detail": .string(notice)])
        }
        index = opened
        logger.info("database ready", metadata: [
            "event": "setup", "dir": .string(directory.root), "files": .stringConvertible(index.count),
        ])
    }

    /// Takes the keys and tags of a newly accepted feed (a walk of the feed, once per changed feed).
    public func setFeed(_ keys: [AssetKey], tags: [AssetKey: String]) {
        feedKeySet = Set(keys)
        feedTags = tags
        storedInFeed = index.batch { keys.reduce(0) { $0 + (isStored($1) ? 1 : 0) } }
        changes.ring()
    }

    /// Stored keys whose tag in the feed differs from the one recorded with their file: the server says their
    /// content changed, so they are fetched again (`refresh`). A file stored without a tag (adopted, or
    /// imported from an old manifest) takes the feed's tag as it is. One index lookup per key of the feed.
    public func staleKeys() -> [AssetKey] {
        var stale: [AssetKey] = []
        index.batch {
            for (key, tag) in feedTags {
                guard var entry = index.entry(for: key), entry.tag != tag else { continue }
                if entry.tag == nil {
                    entry.tag = tag
                    _ = try? index.put(entry)
                } else {
                    stale.append(key)
                }
            }
        }
        return stale.sorted()
    }

    /// The keys among `keys` that have no file in the index (one transaction for the whole sweep).
    public func unstoredKeys(among keys: [AssetKey]) -> [AssetKey] {
        index.batch { keys.filter { !isStored($0) } }
    }

    /// Fetches `key` again because its feed tag changed: conditionally (`If-None-Match`/`If-Modified-Since`
    /// with the validators the server gave for the stored bytes), so an unchanged image costs a `304`. The
    /// file is replaced, atomically as always, only when the bytes differ; the row takes the new tag either way.
    public func refresh(_ key: AssetKey) async throws {
        guard let entry = index.entry(for: key) else { return }
        let tag = feedTags[key]
        do {
            _ = try await loader.reload(key) { [self] in
                try await self.countingFailure { try await self.loadFresh(key, stored: entry, tag: tag) }
            }
        } catch {
            logFailure(key, error)
            throw error
        }
    }

    private func loadFresh(_ key: AssetKey, stored entry: IndexEntry, tag: String?) async throws -> (Asset, Hit) {
        refreshes += 1
        let validators = HTTPValidators(etag: entry.etag, lastModified: entry.lastModified)
        let result: String
        let asset: Asset
        switch try await fetcher.fetchAsset(key, validators: validators.isEmpty ? nil : validators) {
        case .notModified:
            result = "not_modified"
            asset = Asset(trustedOnDisk: key, size: entry.size, sha256: entry.sha256)
            retag(entry, tag: tag, validators: validators)
        case .fetched(let fetched, let newValidators):
            asset = fetched
            if fetched.sha256 == entry.sha256 {
                result = "unchanged"
                retag(entry, tag: tag, validators: newValidators)
            } else {
                result = "updated"
                updates += 1
                try await store(fetched, tag: tag, validators: newValidators)
            }
        }
        changes.ring()
        logger.info("refreshed changed item", metadata: [
            "event": "refresh", "key": .string(key.rawValue), "result": .string(result),
            "file": .string(entry.name), "bytes": .stringConvertible(asset.bytes?.count ?? 0),
        ])
        return (asset, .network)
    }

    /// Records a new tag and validators on a row, if the row is still the one that was looked at.
    private func retag(_ entry: IndexEntry, tag: String?, validators: HTTPValidators) {
        guard var now = index.entry(named: entry.name), now.sha256 == entry.sha256 else { return }
        now.tag = tag
        now.etag = validators.etag
        now.lastModified = validators.lastModified
        _ = try? index.put(now)
    }

    /// Whether the agent has a recorded file for `key` (the book's `storedImagesIndex.contains`).
    public func isStored(_ key: AssetKey) -> Bool {
        index.entry(for: key) != nil
    }

    /// The asset for `key`, from memory, disk or network, logged as one `event=asset` line. The line is
    /// written where the work happened: by the access that read the disk or the network (before anyone
    /// waiting on it resumes), or here for memory hits.
    public func image(_ key: AssetKey) async throws -> (Asset, Hit) {
        do {
            let (asset, hit) = try await loader.asset(for: key) { [self] in
                try await self.countingFailure { try await self.loadBelowMemory(key) }
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
                try await self.countingFailure { try await self.loadForRefetch(key) }
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
            logAccess(key, hit: .disk, asset: asset)
            return (asset, .disk)
        case .notStored:
            try refuseUnusableAnswerOnRecord(key)
        case .damaged(let reason):
            noteRepair(of: key, reason: reason)
        }
        return try await loadFromNetwork(key)
    }

    /// A refetch of a key with no file goes to the network unless its answer is on record as not an image
    /// (a repair of a stored file always does).
    private func loadForRefetch(_ key: AssetKey) async throws -> (Asset, Hit) {
        if !isStored(key) { try refuseUnusableAnswerOnRecord(key) }
        return try await loadFromNetwork(key)
    }

    private func loadFromNetwork(_ key: AssetKey) async throws -> (Asset, Hit) {
        try refuseTakenPath(key)  // no fetch for a path the agent could not write anyway
        let fetch: AssetFetch
        do {
            fetch = try await fetcher.fetchAsset(key, validators: nil)
        } catch {
            if ImageLoader.answeredButUnusable(error) {
                try? index.recordUnusableAnswer(
                    UnusableAnswer(tag: feedTags[key], reason: String(describing: error), answeredAt: Date()), for: key)
            }
            throw error
        }
        guard case .fetched(let asset, let validators) = fetch else {
            throw SyncError(.server, "\(fetcher.server.url(for: key)) answered 304 to an unconditional request")
        }
        if index.unusableAnswer(for: key) != nil { try? index.forgetUnusableAnswer(for: key) }
        try await store(asset, tag: feedTags[key], validators: validators)
        logAccess(key, hit: .network, asset: asset)
        return (asset, .network)
    }

    /// Throws when the index records that `key`'s URL answered with something that is not an image, under the
    /// tag the feed gives it now, less than `RetryPolicy.unusableAnswer` ago: asking again would get the same.
    private func refuseUnusableAnswerOnRecord(_ key: AssetKey) throws(UnusableAnswerOnRecord) {
        guard let answer = index.unusableAnswer(for: key), answer.tag == feedTags[key] else { return }
        let retryAt = answer.answeredAt.addingTimeInterval(loader.retryPolicy.unusableAnswer.seconds)
        if retryAt > Date() { throw UnusableAnswerOnRecord(key: key, answer: answer, retryAt: retryAt) }
    }

    /// Forgets every remembered failure, in memory and in the index, so the next access of each asks again.
    public func forgetFailures() async {
        loader.forgetFailures()
        try? index.forgetUnusableAnswers()
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
        guard let entry = index.entry(for: key) else { return .notStored }
        let name = entry.name
        switch await check(entry) {
        case .trusted:
            return .hit(Asset(trustedOnDisk: key, size: entry.size, sha256: entry.sha256))
        case .verified(let asset):
            return .hit(asset)
        case .changedMeanwhile:
            return index.entry(named: name) == nil ? .notStored : .damaged(.corrupt)
        case .damaged(let reason):
            return .damaged(reason)
        }
    }

    /// What a look at an owned file found.
    private enum FileVerdict {
        /// Its fingerprint is the recorded one: good without reading it.
        case trusted
        /// Read, hashed and parsed: good (its new fingerprint is recorded).
        case verified(Asset)
        case damaged(DamageReason)
        /// The row changed while the file was being read (a purge, a repair): nothing can be said.
        case changedMeanwhile
    }

    /// Looks at the file of `entry`: an `lstat` when its fingerprint is the recorded one, a read, hash and
    /// structure check off the actor otherwise.
    private func check(_ entry: IndexEntry) async -> FileVerdict {
        let name = entry.name
        switch storage.state(of: name) {
        case .absent: return .damaged(.missing)
        case .symbolicLink, .other:
            // Someone put a link, FIFO, socket or directory there: it is theirs now, never opened or replaced.
            releaseTakenPath(name)
            return .changedMeanwhile
        case .regular(let size) where size != entry.size: return .damaged(.corrupt)
        case .regular: break
        }
        let path = directory.path(ofAsset: name)
        let fingerprint = FileFingerprint.of(path)
        if let fingerprint, fingerprint == entry.fingerprint { return .trusted }
        guard let key = try? AssetKey(indexedURL: entry.key, fileName: entry.name) else { return .damaged(.corrupt) }
        let verdict = await Self.verifyFile(at: path, key: key, expectedDigest: entry.sha256)
        filesRead += 1
        // Reentrancy: a purge or another write may have changed the row while we read.
        guard let now = index.entry(named: name), now.key == entry.key, now.sha256 == entry.sha256 else {
            return .changedMeanwhile
        }
        switch verdict {
        case .success(let asset):
            // Only a file that did not change while it was read earns the fingerprint.
            if let fingerprint, FileFingerprint.of(path) == fingerprint {
                try? index.setFingerprint(fingerprint, named: name)
            }
            return .verified(asset)
        case .failure(let reason):
            if now.fingerprint != nil { try? index.setFingerprint(nil, named: name) }
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

    // MARK: - Writing

    /// Puts a fetched asset at its path, if the path is the agent's to write. Throws a `.conflict` error
    /// when it is not, leaving whatever is there untouched.
    ///
    /// The bytes go to a temporary file first (off the actor); whether the path is the agent's is decided
    /// after that, on the actor, from what is there then, because a purge, a repair or the user may have
    /// changed it while the file was written.
    private func store(_ asset: Asset, tag: String?, validators: HTTPValidators) async throws {
        guard let bytes = asset.bytes else { return }  // a trusted disk copy is already in place
        let name = AssetFileName.name(for: asset.key)
        let path = directory.path(ofAsset: name)
        try refuseTakenPath(asset.key)  // before writing anything
        let temporary = try await DiskStorage.writeTemporaryFile(bytes, in: directory.temporaryDirectory)
        // Decided after the write, on the actor, from what is at the path now.
        let owned = index.entry(named: name)?.key == asset.key.rawValue
        let occupant = PathOccupant.at(path)
        if let refusal = occupant.refusal(owned: owned) {
            unlink(temporary)
            throw conflict(asset.key, path: path, what: refusal, occupant: occupant)
        }
        let replacing = occupant.kind == .regular
        if replacing && !owned {
            unlink(temporary)
            try await adoptOrRefuse(asset, name: name, path: path, tag: tag, validators: validators)
            return
        }
        switch try storage.install(temporaryFile: temporary, as: name, replacing: replacing) {
        case .installed:
            do {
                try record(asset, name: name, path: path, tag: tag, validators: validators)
            } catch {
                // No row (a full disk, say): a new file left in place would look like the user's from now on,
                // and be refused once the server's copy changes. It is taken back (nothing ran in between);
                // a replaced file keeps its old row and is repaired at its next check.
                if !replacing { _ = try? storage.remove(name) }
                throw error
            }
            conflictLedger.clear(path: path)
        case .occupied:
            try await adoptOrRefuse(asset, name: name, path: path, tag: tag, validators: validators)
        }
    }

    /// Records a file the agent just put in place (or adopted), with the fingerprint it has now.
    private func record(_ asset: Asset, name: String, path: String, tag: String?, validators: HTTPValidators) throws {
        let isNew = try index.put(IndexEntry(
            name: name, key: asset.key.rawValue, size: asset.size, sha256: asset.sha256, tag: tag,
            etag: validators.etag, lastModified: validators.lastModified, fingerprint: FileFingerprint.of(path)))
        if isNew, feedKeySet.contains(asset.key) { storedInFeed += 1 }
        changes.ring()
    }

    private func adoptOrRefuse(
        _ asset: Asset, name: String, path: String, tag: String?, validators: HTTPValidators
    ) async throws {
        let occupant = PathOccupant.at(path)
        if let refusal = occupant.refusal(owned: false) {
            throw conflict(asset.key, path: path, what: refusal, occupant: occupant)
        }
        let existing = await Self.digestOfFile(at: path)
        guard existing == asset.sha256, case .regular = storage.state(of: name) else {
            throw conflict(asset.key, path: path, what: "a file the agent did not write", occupant: PathOccupant.at(path))
        }
        try record(asset, name: name, path: path, tag: tag, validators: validators)
        logger.info("adopted identical file", metadata: [
            "event": "adopt", "key": .string(asset.key.rawValue), "file": .string(name),
        ])
    }

    private nonisolated static func digestOfFile(at path: String) async -> String? {
        await BlockingIO.run {
            guard let bytes = try? DiskStorage.readFile(at: path) else { return nil }
            return Asset.digest(bytes)
        }
    }

    private func conflict(_ key: AssetKey, path: String, what: String, occupant: PathOccupant) -> SyncError {
        if conflictLedger.note(path: path, occupant: "\(what) \(occupant.identity)") {
            conflicts += 1
            logger.warning("path taken, left untouched", metadata: [
                "event": "conflict", "key": .string(key.rawValue), "path": .string(path), "reason": .string(what),
            ])
        }
        return SyncError(
            .conflict, "\(path) is \(what); left untouched (move it away to let the agent store \(key))", path: path)
    }

    /// Makes everything recorded so far durable against a power cut: the directory's entries (renames,
    /// unlinks) and the index's write-ahead log. Called at the end of a pass and on stop.
    public func makeDurable() async throws {
        await storage.syncDirectory()
        try index.checkpoint()
    }

    /// Counts and logs a repair (`event=repair reason=missing|corrupt`), before its `hit=network` line.
    public func noteRepair(of key: AssetKey, reason: DamageReason) {
        repairs += 1
        changes.ring()
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

    /// Checks the file `name` against the index: a cheap `lstat` when its fingerprint is the recorded one, a
    /// hash off the actor otherwise.
    public func check(fileNamed name: String) async -> FileCheck {
        guard let entry = index.entry(named: name) else { return .notOwned }
        switch await check(entry) {
        case .trusted, .verified: return .intact
        case .damaged(let reason): return .damaged(reason)
        case .changedMeanwhile: return .notOwned
        }
    }

    /// Reads and hashes the file `name` whatever its fingerprint says: the scrub, which catches bit rot that
    /// left the fingerprint alone. A damaged file loses its fingerprint, so every later look reads it too.
    public func scrub(fileNamed name: String) async -> FileCheck {
        guard var entry = index.entry(named: name) else { return .notOwned }
        entry.fingerprint = nil
        switch await check(entry) {
        case .trusted, .verified: return .intact
        case .damaged(let reason):
            try? index.setFingerprint(nil, named: name)
            return .damaged(reason)
        case .changedMeanwhile: return .notOwned
        }
    }

    /// The key recorded for file `name`, if the agent owns it.
    public func ownedKey(forFileNamed name: String) -> AssetKey? {
        index.entry(named: name).flatMap { try? AssetKey(indexedURL: $0.key, fileName: $0.name) }
    }

    /// Every key the agent owns a file for. Walks the index: for polls and purges, not per access.
    public var ownedKeys: [AssetKey] {
        index.allEntries().compactMap { try? AssetKey(indexedURL: $0.key, fileName: $0.name) }.sorted()
    }

    /// The names of every file the agent owns. Walks the index.
    public var ownedFileNames: [String] {
        index.allEntries().map(\.name)
    }

    /// How many files the agent owns.
    public var ownedCount: Int { index.count }

    /// Removes the agent's file for `key` (only if its bytes are still what the agent wrote) and forgets it.
    /// A file changed by someone else is left in place and simply stops being the agent's.
    @discardableResult
    public func removeOwnedFile(for key: AssetKey) async throws -> Int {
        guard let entry = index.entry(for: key) else { return 0 }
        let name = entry.name
        let removable = await check(fileNamed: name) == .intact
        // Reentrancy: the row may have been replaced or removed while the file was checked.
        guard let now = index.entry(for: key), now.sha256 == entry.sha256 else { return 0 }
        try index.remove(named: name)
        if feedKeySet.contains(key) { storedInFeed -= 1 }
        changes.ring()
        if removable, try storage.remove(name) { return entry.size }
        return 0
    }

    /// The book's `clear()`: removes every file the agent wrote (those still intact) and their rows; a file stored
    /// while it runs keeps its row.
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
        // Rows of files stored while this ran (their keys were fetched during the awaits above) stay: those
        // files are the agent's, and dropping their rows would leave them looking like the user's.
        try index.forgetUnusableAnswers()
        changes.ring()
        try await makeDurable()
        return (files, bytes)
    }

    // MARK: - Paths taken by someone else

    /// The agent's file at `name` was replaced by something it must never open or write (a FIFO, directory,
    /// socket, device or symbolic link): the file is gone and the path is not the agent's any more. Forgets
    /// the record and reports the conflict (once per occupant); later accesses fetch nothing for it.
    private func releaseTakenPath(_ name: String) {
        guard let entry = index.entry(named: name) else { return }
        _ = try? index.remove(named: name)
        guard let key = try? AssetKey(indexedURL: entry.key, fileName: entry.name) else { return }
        if feedKeySet.contains(key) { storedInFeed -= 1 }
        changes.ring()
        // Reported now (once, through the ledger): the path is someone else's until they free it.
        let path = directory.path(ofAsset: name)
        let occupant = PathOccupant.at(path)
        _ = conflict(key, path: path, what: occupant.refusal(owned: false) ?? "not a regular file", occupant: occupant)
    }

    /// Throws the (once-logged) conflict when the path of `key` holds something the agent may not write.
    private func refuseTakenPath(_ key: AssetKey) throws(SyncError) {
        let path = directory.path(ofAsset: AssetFileName.name(for: key))
        let occupant = PathOccupant.at(path)
        if let refusal = occupant.refusal(owned: isStored(key)) {
            throw conflict(key, path: path, what: refusal, occupant: occupant)
        }
    }

    // MARK: - Logging

    private func logAccess(_ key: AssetKey, hit: Hit, asset: Asset) {
        changes.ring()
        hits[hit, default: 0] += 1
        fetcher.metrics.hit(hit)
        logger.info("asset", metadata: [
            "event": "asset", "key": .string(key.rawValue), "hit": .string(hit.rawValue),
            "bytes": .stringConvertible(asset.size), "file": .string(AssetFileName.name(for: key)),
        ])
    }

    /// Each access that fails logs a line (`logFailure`), but `emojiart_sync_failures_total` counts loads: the
    /// accesses that join a load in flight share its one failure, and a failure on record did no work.
    private func countingFailure(_ load: () async throws -> (Asset, Hit)) async throws -> (Asset, Hit) {
        do {
            return try await load()
        } catch {
            if !(error is CancellationError || error is UnusableAnswerOnRecord) {
                fetcher.metrics.failure(error)
            }
            throw error
        }
    }

    private func logFailure(_ key: AssetKey, _ error: any Error) {
        changes.ring()
        var metadata: Logger.Metadata = [
            "event": "asset", "key": .string(key.rawValue), "result": "failed", "error": .string(String(describing: error)),
        ]
        if error is ImageLoader.RememberedFailure || error is UnusableAnswerOnRecord {
            metadata["remembered"] = "true"
        }
        logger.warning("asset unavailable", metadata: metadata)
    }
}
