import CurlHTTP
import FoundationEssentials
import Logging

/// The persistent image cache: memory, then disk, then network, and the ledger of what the agent wrote.
///
/// Owns (in the `SyncActor` silo) the `DiskStorage`, the `ImageLoader`'s memory cache and loads in flight, the
/// `AssetIndex` that is both the stored-images index and the ownership record, the `GroupCommitter` that makes
/// new files durable a batch at a time, and the hit, repair and conflict counters. Every asset access logs
/// exactly one line with `hit=memory|disk|network` (or the failure).
///
/// A pass hands it a batch of feed entries per visit (`answer(_:)`): every memory hit and every trusted disk hit of
/// the batch is answered and logged in that one turn, and only the misses come back, to be loaded one job each
/// (`image(_:)`). docs/BENCHMARKS.md says what this saved.
///
/// Rules it keeps:
/// - A disk hit needs a regular file (no symlink followed) whose size matches the index and whose `lstat`
///   fingerprint is the one recorded when the agent last wrote or verified it; with another fingerprint, its
///   SHA-256 must match the index and it must still parse as a PNG. Anything else is re-fetched and logged as
///   `event=repair`.
/// - Files not in the index are not the agent's: never modified, moved or deleted. If one sits at an
///   asset's path it is reported as a conflict, unless it is byte-identical to what the server sent and did not
///   change while it was read, in which case it is adopted without touching it (this is how files written just
///   before a crash, whose index row was not yet committed, come back under the agent's care).
/// - An index that cannot be read is an error, never "not the agent's".
@SyncActor
public final class ImageDatabase {
    public let storage: DiskStorage
    public let loader: ImageLoader
    public let fetcher: AssetFetcher
    let logger: Logger
    /// Repairs and other user-visible work go here first: a pass waits for it before its next batch.
    public let urgentLane = UrgentLane()
    /// Makes new files durable, visible and recorded a batch at a time.
    public private(set) var committer: GroupCommitter!

    /// The ledger and index; opened by `setUp()`.
    public private(set) var index: AssetIndex!

    /// Accesses by the layer that served them: one per `event=asset` line, as `emojiart_sync_hits_total`.
    public internal(set) var hits: [Hit: Int] = [:]
    /// Bytes of asset bodies received from the gallery, valid or not, as `emojiart_sync_bytes_fetched_total`.
    public nonisolated var bytesFetched: Int { fetcher.receivedBytes.count }
    public internal(set) var repairs = 0
    public internal(set) var conflicts = 0
    /// Turns the silo took for passes and accesses: one per batch of entries, one per miss. A test checks that a
    /// warm pass costs batches, not entries.
    public internal(set) var siloVisits = 0
    /// The feed the agent keeps now (its keys and their tags), and how many of its keys have a file in the
    /// index: kept as rows change, so `status` costs nothing at any gallery size.
    private(set) var feed = FeedState()
    /// Whether a key is in the feed (`feedKeySet.contains`): the feed, by the name the stores use.
    var feedKeySet: FeedState { feed }
    /// The feed's tag (`checksum`) per key (`feedTags[key]`), recorded with each file stored, compared by
    /// `staleKeys()`: the feed, by the name the loads use.
    var feedTags: FeedState { feed }
    public internal(set) var storedInFeed = 0
    /// The keys `staleKeys()` last found, for the feed of that sweep: while the feed stays the same, only they
    /// can still be stale (a file stored since took the feed's tag).
    private var lastStale: (feedVersion: UInt64, keys: [AssetKey])?
    /// What `unstoredKeys(among:)` last found for the feed's keys, and when: valid while neither the feed nor
    /// the index's rows changed.
    private var lastUnstored: (feedVersion: UInt64, rowChanges: UInt64, keys: [AssetKey])?
    /// Files fetched again because the feed's tag for them changed, and how many of those had new bytes.
    public internal(set) var refreshes = 0
    public internal(set) var updates = 0
    /// Rung when anything `status` shows changed; the status writer sleeps on it.
    public nonisolated let changes = Alarm()

    /// Owned files whose bytes were read to verify them (a fingerprint that matched needs no read).
    public internal(set) var filesRead = 0
    /// The last file that was not the agent's and was moved aside to let the agent store its asset, for `status`.
    public internal(set) var lastMovedAside: AgentStatus.MovedAside?
    /// Conflicts already logged: each path is reported once, not once per poll.
    var conflictLedger = ConflictLedger()
    /// The running pass's counts and the keys it has logged: one line per asset per pass, however often the feed
    /// lists it. Nil outside a pass (a repair's outcome is always logged).
    var pass: PassTally?
    /// Keys whose failure has been written since they last succeeded, with the failure written: the same failure on
    /// record (or the same conflict found again) is then counted by each pass, not written again (a failing item
    /// would otherwise cost a line per poll for as long as it fails).
    var failuresWritten: [AssetKey: String] = [:]
    /// The most recent failure of an asset (not one on record being refused again), for `status`.
    public internal(set) var lastAssetFailure: (message: String, at: Date)?

    public nonisolated convenience init(directory: SyncDirectory, loader: ImageLoader, fetcher: AssetFetcher, logger: Logger) {
        self.init(directory: directory, loader: loader, fetcher: fetcher, logger: logger, testHooks: nil)
    }

    /// `testHooks`: what a test makes happen inside this agent's file decisions (nil outside tests).
    nonisolated init(
        directory: SyncDirectory, loader: ImageLoader, fetcher: AssetFetcher, logger: Logger, testHooks: AgentTestHooks?
    ) {
        self.storage = DiskStorage(directory: directory, hooks: testHooks)
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
        committer = GroupCommitter(storage: storage, index: { [unowned self] in self.index })
        logger.info("database ready", metadata: [
            "event": "setup", "dir": .string(directory.root), "files": .stringConvertible(index.count),
        ])
    }

    /// Takes the keys and tags of a newly accepted feed. A feed with the same items as the one kept (a new
    /// `ETag`, the same bytes) changes nothing: the one kept stays, and so does what was worked out from it.
    /// Otherwise one walk of the index counts the keys stored, instead of a lookup per key.
    /// Returns whether the items changed (false: the same keys with the same tags as the feed kept).
    @discardableResult
    public func setFeed(_ keys: [AssetKey], tags: [AssetKey: String]) throws(SyncError) -> Bool {
        if feedVersion > 0, feed.matches(keys: keys, tags: tags) { return false }
        try replaceFeed(keys, tags: tags)
        return true
    }

    /// `setFeed`, with the comparison of the items (about 50 ms at 100,000) made on the blocking-I/O pool, so
    /// that the silo serves repairs meanwhile. Returns whether the items changed.
    public func setFeedComparingOffSilo(_ keys: [AssetKey], tags: [AssetKey: String]) async throws(SyncError) -> Bool {
        let (kept, version) = (feed, feedVersion)
        if version > 0, await BlockingIO.run({ kept.matches(keys: keys, tags: tags) }), feedVersion == version {
            return false
        }
        try replaceFeed(keys, tags: tags)
        return true
    }

    /// Makes `keys` and `tags` the feed: one walk of the index counts the keys stored.
    private func replaceFeed(_ keys: [AssetKey], tags: [AssetKey: String]) throws(SyncError) {
        feed = FeedState()  // the old one goes before the new one is built: the peak holds one of them
        let state = FeedState(keys: keys, tags: tags)
        var stored = 0
        try index.forEachKey { key, name, _ in
            if Self.feedKey(key, name: name, in: state) != nil { stored += 1 }
        }
        feed = state
        feedVersion &+= 1
        storedInFeed = stored
        changes.ring()
    }

    /// The feed's key that the row of `key` and file `name` is the file of, if any (what `index.entry(for:)`
    /// finds for it: the same url, at the key's file name).
    private static func feedKey(_ key: String, name: String, in feed: FeedState) -> AssetKey? {
        guard let probe = try? AssetKey(indexedURL: key, fileName: name), let member = feed.member(probe),
            member.fileName == name
        else { return nil }
        return member
    }

    /// Stored keys whose tag in the feed differs from the one recorded with their file: the server says their
    /// content changed, so they are fetched again (`refresh`). A file stored without a tag (adopted, or
    /// imported from an old manifest) takes the feed's tag as it is. One walk of the index for a new feed; for
    /// the same feed, a lookup of each key found stale last time (a file stored since took the feed's tag).
    public func staleKeys() throws(SyncError) -> [AssetKey] {
        if let last = lastStale, last.feedVersion == feedVersion {
            let stale = try index.readTransaction { () throws(SyncError) in
                var stale: [AssetKey] = []
                for key in last.keys {
                    if let recorded = try index.entry(for: key)?.tag, recorded != feed[key] { stale.append(key) }
                }
                return stale
            }
            lastStale = (feedVersion, stale)
            return stale
        }
        var stale: [AssetKey] = []
        var untagged: [(name: String, tag: String)] = []
        let current = feed
        try index.forEachKey { key, name, recorded in
            guard let key = Self.feedKey(key, name: name, in: current), let tag = current[key], recorded != tag else { return }
            if recorded == nil {
                untagged.append((name, tag))
            } else {
                stale.append(key)
            }
        }
        if !untagged.isEmpty {
            try index.transaction { () throws(SyncError) in
                for (name, tag) in untagged { try index.setTag(tag, named: name) }
            }
        }
        stale.sort()
        lastStale = (feedVersion, stale)
        return stale
    }

    /// The keys among `keys` that have no file in the index, in order. For the feed's keys: none when every one
    /// is stored; what the last sweep found, updated with a lookup per row added or removed since, when the feed
    /// did not change; else one walk of the index (not a lookup per key).
    public func unstoredKeys(among keys: [AssetKey]) throws(SyncError) -> [AssetKey] {
        let isFeed = keys == feed.keys
        if isFeed, storedInFeed == keys.count { return [] }
        if isFeed, let last = lastUnstored, last.feedVersion == feedVersion,
            let changed = index.rowsChanged(since: last.rowChanges)
        {
            var unstored = Set(last.keys)
            for (url, name) in changed {
                guard let key = Self.feedKey(url, name: name, in: feed) else { continue }
                if try index.entry(for: key) == nil { unstored.insert(key) } else { unstored.remove(key) }
            }
            let sorted = unstored.sorted()
            lastUnstored = (feedVersion, index.rowChanges, sorted)
            return sorted
        }
        var stored = [String: String](minimumCapacity: index.count)  // url -> file name, as `entry(for:)` matches
        try index.forEachKey { key, name, _ in stored[key] = name }
        let unstored = keys.filter { stored[$0.rawValue] != $0.fileName }.sorted()
        if isFeed { lastUnstored = (feedVersion, index.rowChanges, unstored) }
        return unstored
    }

    /// Whether the agent has a recorded file for `key` (the book's `storedImagesIndex.contains`).
    public func isStored(_ key: AssetKey) throws(SyncError) -> Bool {
        try index.entry(for: key) != nil
    }

    // MARK: - Accesses

    /// Answers a batch of feed entries in one turn: memory hits, disk hits whose fingerprint is the recorded one,
    /// and refusals of keys whose failure is remembered (its retry time not come) or whose answer with no image
    /// is on record are logged and returned as answered; everything else (not stored, damaged, a load in flight
    /// to join, a failure due for its retry) is returned as a miss, for `image(_:)`. Duplicates of a key in the batch are answered alike: the second one
    /// of a key found on disk is a memory hit, as in the book.
    public func answer(_ entries: ArraySlice<AssetKey>) -> BatchAnswer {
        siloVisits += 1
        var answer = BatchAnswer()
        var taken = 0
        do {
            try index.readTransaction { () throws(SyncError) in
                for key in entries {
                    switch try answerNow(key) {
                    case .hit(let asset, let hit)?: answer.answered.append((key, hit, asset.size))
                    case .refused(let reason)?: answer.refused.append((key, reason))
                    case nil: answer.misses.append(key)
                    }
                    taken += 1
                }
            }
        } catch {
            // The index could not be read: the keys not answered go the long way, where each access that still
            // cannot read it fails with this error and logs it.
            noteIndexTrouble(error, while: "answering a batch of accesses")
            answer.misses += entries.dropFirst(taken)
        }
        return answer
    }

    /// What a batch can answer about one key without waiting.
    enum ImmediateAnswer {
        case hit(Asset, Hit)
        /// A remembered failure whose retry time has not come, or an answer with no image on record: the access
        /// is refused (and logged) as `image(_:)` would refuse it. The reason, as `image(_:)`'s error says it.
        case refused(String)
    }

    /// One key of a batch: answered now, or nil for a miss. Throws when the index cannot be read.
    func answerNow(_ key: AssetKey) throws(SyncError) -> ImmediateAnswer? {
        if let asset = loader.cachedAsset(for: key) {
            logAccess(key, hit: .memory, asset: asset)
            return .hit(asset, .memory)
        }
        guard !loader.isLoading(key) else { return nil }
        if let failure = loader.rememberedFailure(for: key) {
            logFailure(key, failure)
            return .refused(String(describing: failure))
        }
        guard !loader.hasFailureOnRecord(key) else { return nil }  // due for its retry: a load
        guard let entry = try index.entry(for: key) else {
            // Not stored, and on record as answering with no image: refused as `image(_:)` would refuse it, and
            // remembered, so the feed's other listings of it are refused from memory.
            guard let refusal = refusal(for: try index.unusableAnswer(for: key), of: key) else { return nil }
            loader.recordFailure(refusal, for: key)
            logFailure(key, refusal)
            return .refused(String(describing: refusal))
        }
        // Anything but the recorded fingerprint is a miss, looked at closely by `image(_:)`.
        guard let asset = trusted(entry, of: key) else { return nil }
        loader.remember(asset)
        logAccess(key, hit: .disk, asset: asset)
        return .hit(asset, .disk)
    }

    /// The asset `entry` records, when its file is the one the agent last wrote or verified: one `lstat` decides
    /// (device, inode, size, mtime, ctime of a regular file, as recorded). Nil otherwise (a failed `lstat`
    /// included: the access then goes the long way, where the error is an error).
    func trusted(_ entry: IndexEntry, of key: AssetKey) -> Asset? {
        guard let fingerprint = entry.fingerprint,
            (try? storage.status.fingerprint(of: directory.path(ofAsset: entry.name))) == fingerprint
        else { return nil }
        return Asset(trustedOnDisk: key, size: entry.size, sha256: entry.sha256)
    }

    /// `key`'s asset when its file is trusted as it is (`trusted(_:of:)`), nil when it is not stored or not intact.
    func trustedOnDisk(_ key: AssetKey) throws(SyncError) -> Asset? {
        try index.entry(for: key).flatMap { trusted($0, of: key) }
    }

    /// The asset for `key`, from memory, disk or network, logged as one `event=asset` line. The line is
    /// written where the work happened: by the access that read the disk or the network (before anyone
    /// waiting on it resumes), or here for memory hits.
    public func image(_ key: AssetKey) async throws -> (Asset, Hit) {
        siloVisits += 1
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
    ///
    /// With a `reason` it is a repair: the load that starts logs `event=repair` first, unless it finds the file
    /// intact (its `lstat` is the fingerprint recorded when the agent last wrote it: another repair of the same
    /// damage finished after this one was decided), which is a disk hit and fetches nothing. A refetch that joins
    /// a load in flight logs no repair line: that load is the repair. `priority: .urgent` for a repair a person's
    /// change asked for: its transfer starts before those of a pass still waiting for a slot.
    public func refetch(
        _ key: AssetKey, reason: DamageReason? = nil, priority: RequestPriority = .normal
    ) async throws -> Asset {
        siloVisits += 1
        do {
            let (asset, hit) = try await loader.reload(key) { [self] in
                if let reason {
                    if let intact = try self.trustedOnDisk(key) {
                        self.logAccess(key, hit: .disk, asset: intact)
                        return (intact, .disk)
                    }
                    self.noteRepair(of: key, reason: reason)
                }
                return try await self.countingFailure { try await self.loadForRefetch(key, priority: priority) }
            }
            if hit == .memory { logAccess(key, hit: hit, asset: asset) }
            return asset
        } catch {
            logFailure(key, error)
            throw error
        }
    }

    /// Fetches `key` again because its feed tag changed: conditionally (`If-None-Match`/`If-Modified-Since`
    /// with the validators the server gave for the stored bytes), so an unchanged image costs a `304`. The
    /// file is replaced, atomically as always, only when the bytes differ; the row takes the new tag either way.
    public func refresh(_ key: AssetKey) async throws {
        guard let entry = try index.entry(for: key) else { return }
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

    /// What `assetStates()` last found, and what it depended on: recounted only when the failures, the stored
    /// files or the feed changed, not at every status write (10,000 failing keys cost 78 ms a write otherwise).
    private var assetStatesCache: (basis: [UInt64], states: (ok: Int, missing: Int, failing: Int))?
    private var feedVersion: UInt64 = 0

    /// A pass begins: from now until `endPass()` each asset is logged once (`PassTally`). A pass begun while one
    /// runs is part of it.
    func beginPass() {
        if pass == nil { pass = PassTally(bytesAtStart: bytesFetched) }
    }

    /// Ends the pass and writes its summary line (`event=pass`), with `extra` fields (a `--once` run's totals).
    func endPass(extra: Logger.Metadata = [:]) {
        guard let ended = pass else { return }
        pass = nil
        logger.info("pass done", metadata: ended.summary(bytesNow: bytesFetched).merging(extra) { _, given in given })
    }

    /// The feed's assets in exactly one state each: `ok` (stored and not failing), `failing` (the last access
    /// failed; retried at its time), `missing` (neither: not fetched yet, or damaged and waiting for its repair).
    /// The three add up to the feed's size. Costs a lookup per failing key, not per asset.
    public func assetStates() throws(SyncError) -> (ok: Int, missing: Int, failing: Int) {
        let basis = [loader.failuresVersion, UInt64(storedInFeed), feedVersion]
        if let cached = assetStatesCache, cached.basis == basis { return cached.states }
        var failing = 0
        var failingStored = 0
        for key in loader.failingKeysUnordered where feed.contains(key) {
            failing += 1
            if try index.entry(for: key) != nil { failingStored += 1 }
        }
        let ok = storedInFeed - failingStored
        let states = (ok, feed.count - ok - failing, failing)
        assetStatesCache = (basis, states)
        return states
    }

    /// Forgets every remembered failure, in memory and in the index, so the next access of each asks again.
    public func forgetFailures() throws(SyncError) {
        loader.forgetFailures()
        try index.forgetUnusableAnswers()
    }

    /// Makes everything recorded so far durable against a power cut: the directory's entries (renames,
    /// unlinks) and the index's write-ahead log. Called at the end of a pass and on stop.
    public func makeDurable() async throws {
        try await storage.syncDirectory()
        try index.checkpoint()
    }
}

/// What one batch visit answered: the hits (already logged and counted), the refusals of failures on record
/// (already logged), and the keys that need a load.
public struct BatchAnswer: Sendable {
    public var answered: [(key: AssetKey, hit: Hit, bytes: Int)] = []
    public var refused: [(key: AssetKey, failure: String)] = []
    public var misses: [AssetKey] = []
}

