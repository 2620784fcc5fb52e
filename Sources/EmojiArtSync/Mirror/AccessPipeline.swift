import CurlHTTP
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Every asset access, memory, then disk, then network: the book's `ImageDatabase.image(_:)`, a batch at a time.
///
/// A pass hands it a batch of feed entries per visit (`answer(_:pass:)`). In that one turn of the silo each entry is
/// decided once: a memory hit, a disk hit (its file's `lstat` is the fingerprint recorded when the agent last wrote
/// or verified it), a refusal (a failure or an answer with no image on record, its retry time not come), or a miss,
/// which is registered in flight there and then, so later listings of the key attach to it without a task. The
/// misses of a batch whose keys are not stored are then one job of the caller's (`fetchGroup(_:)`): their requests
/// go to the HTTP client together, each answer is validated, hashed and written to its temporary file as it comes
/// (`GroupFetch`), and what finished together is committed in one entry into the silo (`GroupCommitter.publish`),
/// which ends their loads. Any other miss is one job of its own (`load(_:)`): off the silo it checks the path is
/// writable, fetches, validates, hashes and writes the temporary file (`AssetFetcher.fetchAndStage`); one entry
/// into the silo commits it and ends the load. Repairs (`refetch`) and refreshes run the same way, each in its
/// caller's task.
///
/// Owns the memory layer (`ImageLoader`: the cache, the loads in flight, the failures) and the pass numbers; asks the
/// index, the catalogue (the feed's tags), the inspector, the committer and the fetcher; reports every access,
/// exactly one `event=asset` line per access (per pass), to the `AccessLog`.
@SyncActor
final class AccessPipeline {
    let memory: ImageLoader
    private let index: AssetIndex
    private let catalogue: FeedCatalogue
    private let inspector: FileInspector
    private let committer: GroupCommitter
    private nonisolated let directoryDescriptor: Int32
    private nonisolated let fetcher: AssetFetcher
    private let log: AccessLog
    private nonisolated let status: PathStatus
    private nonisolated let directory: SyncDirectory
    /// DIR's `tmp/`, opened once: where the bodies of misses are written.
    private nonisolated let temporaryFolder: TemporaryFolder
    /// Holds renames into DIR, and a repair's new temporary file, while DIR is being emptied.
    private nonisolated let gate: RenameGate
    private var passes: UInt64 = 0
    /// Where the memory cache holds each key of the feed a pass works through, by position (`CacheHints`).
    // SAFETY: read and changed in place only, in the silo, by `CacheHints`' own methods, which take no closure and
    // call nothing: no two accesses can overlap, so the run-time check at each of a pass's listings cannot fail.
    @exclusivity(unchecked) private var cacheHints = CacheHints()
    /// What the running pass has answered from memory or refused, by position: its repeat listings (`PassAnswers`).
    // SAFETY: as `cacheHints`: read and changed in place only, in the silo, by its own methods, which reach nothing
    // of this object (the one closure they take, `answered`'s `isWaiting`, reads the clock through the `ImageLoader`).
    @exclusivity(unchecked) private var passAnswers = PassAnswers()
    /// What `assetStates()` last found, and what it depended on: recounted only when the failures, the stored
    /// files or the feed changed, not at every status write (10,000 failing keys cost 78 ms a write otherwise).
    private var assetStatesCache: (basis: [UInt64], states: (ok: Int, missing: Int, failing: Int))?

    init(
        memory: ImageLoader, index: AssetIndex, catalogue: FeedCatalogue, inspector: FileInspector,
        committer: GroupCommitter, fetcher: AssetFetcher, log: AccessLog, status: PathStatus, directory: SyncDirectory,
        directoryDescriptor: Int32, temporaryFolder: TemporaryFolder, gate: RenameGate
    ) {
        self.temporaryFolder = temporaryFolder
        self.gate = gate
        self.directoryDescriptor = directoryDescriptor
        self.memory = memory
        self.index = index
        self.catalogue = catalogue
        self.inspector = inspector
        self.committer = committer
        self.fetcher = fetcher
        self.log = log
        self.status = status
        self.directory = directory
    }

    /// A miss decided in a batch and registered in flight: what its job does (`load(_:)`).
    struct Miss: Sendable {
        let token: ImageLoader.LoadToken
        let plan: Plan
        /// The key's position in the pass's feed.
        let position: Int32
        /// Attempts already made for it that failed for now (a group fetch's, `fetchGroup`): its job retries.
        var retriesUsed = 0
        var key: AssetKey { token.key }
    }

    /// A listing of a key that another caller is loading: the pass waits for that load as a single access.
    struct Join: Sendable {
        let key: AssetKey
        let position: Int32
    }

    /// What a pass lists: the feed's distinct keys (a listing is a position among them), the catalogue's
    /// version of that feed, and the pass's number.
    struct Listings: Sendable {
        let keys: [AssetKey]
        let feedVersion: UInt64
        let pass: UInt64
    }

    enum Plan: Sendable {
        /// Not stored: fetched. `unusableOnRecord`: the index records an answer with no image (forgotten once stored).
        case fetch(unusableOnRecord: Bool)
        /// Stored, but its `lstat` is not the recorded fingerprint: read and checked, repaired if damaged.
        case verify(IndexEntry, unusableOnRecord: Bool)
        /// Stored, looked at with the other files of its batch (`verify(_:)`) and not found intact: the job acts on
        /// what that look found (a repair, or the error of a file that could not be read), without reading it again.
        case looked(Result<FileInspector.FileVerdict, SyncError>, IndexEntry, unusableOnRecord: Bool)
        /// The index could not be read when the batch was answered: decided again by the job.
        case decide
    }

    /// What one job of a miss came to, for the pass: the outcome, and the listings of the key attached to it.
    struct LoadOutcome: Sendable {
        let key: AssetKey
        let hit: Hit?
        let bytes: Int
        let failure: (any Error)?
        let attachedListings: Int
    }

    /// A number for a new pass: the listings a pass makes of a key it is loading attach to that load.
    func beginPass() -> UInt64 {
        passes += 1
        return passes
    }

    // MARK: - Batches

    /// Answers a batch of feed entries (see the type's comment). Duplicates of a key in the batch are answered alike:
    /// the second one of a key found on disk is a memory hit, as in the book, and one of a key being loaded by this
    /// pass is attached to its load.
    ///
    /// Two turns of the silo with one trip to io between them: the first answers what memory holds and lists the
    /// files whose recorded fingerprint the catalogue knows; io takes their `fstatat`s; the second decides every
    /// entry not answered yet, trusting a file whose fingerprint is still the recorded one without a lookup.
    func answer(_ entries: ArraySlice<Int32>, of listings: Listings) async -> BatchAnswer {
        var answer = BatchAnswer()
        var pending: [Int32] = []
        /// Positions of the files to look at: those whose recorded fingerprint the catalogue knows.
        var looks: [Int32] = []
        if !cacheHints.isFor(version: listings.feedVersion, count: listings.keys.count),
            !cacheHints.carry(to: listings.feedVersion, keys: listings.keys)
        {
            cacheHints.begin(
                version: listings.feedVersion, keys: listings.keys, cacheCount: memory.cacheCount,
                cacheInserts: memory.cacheInserts)
            // Each key the pass finds intact or fetches goes into the cache: room for them all at once (a cold
            // pass that let the table and the slots double as they filled kept up to twice the room they need).
            memory.reserveCache(listings.keys.count)
        }
        passAnswers.begin(
            pass: listings.pass, version: listings.feedVersion, count: listings.keys.count,
            removals: memory.cacheRemovals)
        log.batch {
            for position in entries {
                if answeredRepeat(position, of: listings, into: &answer) { continue }
                if answeredFromMemory(position, of: listings, into: &answer) { continue }
                let key = listings.keys[Int(position)]
                if !memory.isLoading(key), catalogue.recordedDigest(at: Int(position), version: listings.feedVersion) != nil {
                    looks.append(position)
                }
                pending.append(position)
            }
        }
        guard !pending.isEmpty else { return answer }
        // A key listed twice in the batch is looked at once (sorting 256 positions beats a search per entry).
        looks.sort()
        var kept = 0
        for at in looks.indices where kept == 0 || looks[kept - 1] != looks[at] {
            looks[kept] = looks[at]
            kept += 1
        }
        looks.removeSubrange(kept...)
        // What io found at each file looked at (nil inside: nothing, not a regular file, or a failed `lstat`).
        var found: [Int32: FileFingerprint?] = [:]
        if !looks.isEmpty {
            let keys = looks.map { listings.keys[Int($0)] }
            let descriptor = directoryDescriptor
            let fingerprints = await BlockingIO.run { DiskStorage.fingerprints(of: keys, in: descriptor) }
            // Reentrancy: a file is trusted below only if what was found is still what the index records now.
            for (position, fingerprint) in zip(looks, fingerprints) { found[position] = fingerprint }
        }
        var taken = 0
        do {
            try log.batch { () throws(SyncError) in
                try index.readTransaction { () throws(SyncError) in
                    for position in pending {
                        try decide(position, of: listings, found: found.isEmpty ? nil : found[position], into: &answer)
                        taken += 1
                    }
                }
            }
        } catch {
            // The index could not be read: the keys not answered are decided again by their jobs, where each
            // access that still cannot read it fails with this error and logs it.
            log.indexTrouble(error, while: "answering a batch of accesses")
            for position in pending.dropFirst(taken) {
                let key = listings.keys[Int(position)]
                if memory.isLoading(key) {
                    if !memory.attachListing(key, pass: listings.pass) { answer.joins.append(Join(key: key, position: position)) }
                } else {
                    answer.loads.append(Miss(token: memory.beginLoad(key, pass: listings.pass), plan: .decide, position: position))
                }
            }
        }
        return answer
    }

    /// Answers the listing at `position` as the pass answered its key before (`PassAnswers`), with no lookup at
    /// all: a memory hit while the cache certainly still holds the key, its line written already; a refusal while
    /// the failure is on record as it was and not due.
    private func answeredRepeat(_ position: Int32, of listings: Listings, into answer: inout BatchAnswer) -> Bool {
        let feedPosition = FeedPosition(Int(position), version: listings.feedVersion)
        let memory = memory
        switch passAnswers.answered(
            at: position, pass: listings.pass, version: listings.feedVersion, removals: memory.cacheRemovals,
            failuresVersion: memory.failuresVersion, isWaiting: { memory.isWaiting(until: $0) })
        {
        case nil:
            return false
        case .memoryHit(let size):
            guard log.repeatedMemoryHit(at: feedPosition) else { return false }
            memory.countMemoryHit()
            answer.answered.append((position, .memory, size))
        case .refusal(let failure):
            guard log.repeatedRefusal(at: feedPosition) else { return false }
            answer.refused.append((position, failure))
        }
        return true
    }

    /// Ends pass `pass`: what it answered is dropped.
    func endPass(_ pass: UInt64) {
        passAnswers.end(pass)
    }

    /// Answers the listing at `position` from memory, if memory has it: through the slot the cache held it in
    /// when the pass last found it (a repeat listing hashes nothing), else by its key, unless the hints are
    /// complete (then a key with no slot is not cached: its first listing hashes nothing either).
    private func answeredFromMemory(_ position: Int32, of listings: Listings, into answer: inout BatchAnswer) -> Bool {
        let key = listings.keys[Int(position)]
        let version = listings.feedVersion
        var hint = cacheHints.slot(at: position, version: version)
        defer { cacheHints.keep(hint, at: position, version: version) }
        guard let size = memory.cachedSize(
            for: key, hint: &hint, onlyAtHint: cacheHints.isComplete(cacheInserts: memory.cacheInserts))
        else { return false }
        log.access(key, at: FeedPosition(Int(position), version: listings.feedVersion), hit: .memory, size: size)
        passAnswers.note(size, at: position, pass: listings.pass, version: version)
        answer.answered.append((position, .memory, size))
        return true
    }

    /// One entry of a batch. Throws when the index cannot be read.
    /// `found`: what io found at the key's file when the batch looked at it (nil: not looked at; nil inside: no
    /// regular file, or a failed `lstat`).
    private func decide(
        _ position: Int32, of listings: Listings, found: FileFingerprint??, into answer: inout BatchAnswer
    ) throws(SyncError) {
        if answeredFromMemory(position, of: listings, into: &answer) { return }
        let key = listings.keys[Int(position)]
        let pass = listings.pass
        let feedPosition = FeedPosition(Int(position), version: listings.feedVersion)
        if memory.isLoading(key) {
            if !memory.attachListing(key, pass: pass) { answer.joins.append(Join(key: key, position: position)) }
            return
        }
        if let remembered = memory.rememberedFailure(for: key) {
            let failure: any Error = remembered  // boxed once, for the log, the refusal and the pass's repeats
            log.failure(key, failure, onRecord: true, at: feedPosition)
            answer.refused.append((position, failure))
            if let retryAt = remembered.retryAt {
                passAnswers.note(
                    PassAnswers.Refusal(failure: failure, retryAt: retryAt, failuresVersion: memory.failuresVersion),
                    at: position, pass: pass, version: listings.feedVersion)
            }
            return
        }
        if case let seen?? = found,
            catalogue.recordedDigest(at: Int(position), version: listings.feedVersion) == FingerprintDigest(seen)
        {
            // The file is the one the index records, and nothing changed the row since it was looked at.
            let asset = Asset(trustedOnDisk: key, size: Int(seen.size))
            keep(asset, at: position, of: listings)
            log.access(key, at: feedPosition, hit: .disk, size: asset.size)
            answer.answered.append((position, .disk, asset.size))
            return
        }
        let look: (entry: IndexEntry?, unusable: UnusableAnswer?)
        if catalogue.isStored(at: Int(position), version: listings.feedVersion) == false {
            // No row (the catalogue follows every row change): only an answer that was no image may be on record,
            // read from its own table, and not at all when its filter has never seen the key (every key of a
            // cold pass).
            look = (nil, index.mayHaveUnusableAnswer(for: key) ? try index.unusableAnswer(for: key) : nil)
        } else {
            look = try index.lookUp(key)
        }
        if let entry = look.entry {
            // A file the batch looked at is judged by what io found (no `lstat` in the silo): not as the row records
            // it, or not looked at (its row was not known when the batch was looked at), it is looked at by its
            // job (`Plan.verify`, on io), which finds it intact, reads it, or reports the error.
            let intact: Asset? =
                if case .some(let seen) = found, seen != nil, seen == entry.fingerprint {
                    Asset(trustedOnDisk: key, size: entry.size)
                } else {
                    nil
                }
            if let asset = intact {
                keep(asset, at: position, of: listings)
                log.access(key, at: feedPosition, hit: .disk, size: asset.size)
                answer.answered.append((position, .disk, asset.size))
                return
            }
            let plan = Plan.verify(entry, unusableOnRecord: look.unusable != nil)
            answer.loads.append(Miss(token: memory.beginLoad(key, pass: pass), plan: plan, position: position))
            return
        }
        if let refusal = refusal(for: look.unusable, of: key) {
            // Not stored, and on record as answering with no image: refused, and remembered, so the feed's other
            // listings of it are refused from memory.
            memory.recordFailure(refusal, for: key)
            log.failure(key, refusal, at: feedPosition)
            answer.refused.append((position, refusal))
            return
        }
        let plan = Plan.fetch(unusableOnRecord: look.unusable != nil)
        answer.loads.append(Miss(token: memory.beginLoad(key, pass: pass), plan: plan, position: position))
    }

    /// Keeps an asset found intact on disk in memory, where the pass's later listings of it find it.
    private func keep(_ asset: Asset, at position: Int32, of listings: Listings) {
        let slot = memory.remember(asset)
        cacheHints.keepInserted(slot, at: position, version: listings.feedVersion)
        if slot >= 0 { passAnswers.note(asset.size, at: position, pass: listings.pass, version: listings.feedVersion) }
    }

    /// `key`'s position in the feed the catalogue keeps now, for the log's count of the lines a pass wrote.
    private func feedPosition(of key: AssetKey) -> FeedPosition? {
        catalogue.position(of: key).map { FeedPosition($0, version: catalogue.version) }
    }

    /// Runs the job of a miss in the caller's task and ends its load: the outcome, logged, with the listings that
    /// were attached to it answered alike. A key that is not stored is fetched before the job enters the silo at
    /// all: it enters once, to commit and end the load.
    nonisolated func load(_ miss: Miss) async -> LoadOutcome {
        guard case .fetch(let unusableOnRecord) = miss.plan else { return await loadInSilo(miss) }
        let staging: Result<Staging, any Error>
        do {
            staging = .success(try await Self.stage(
                miss.key, owned: false, fetcher: fetcher, status: status, directory: directory, folder: temporaryFolder,
                priority: .normal, gate: gate, retriesUsed: miss.retriesUsed))
        } catch {
            staging = .failure(error)
        }
        return await end(miss) { [self] in
            try await publish(miss.key, staging: staging, unusableOnRecord: unusableOnRecord)
        }
    }

    /// The misses of a batch that are not stored (`Plan.fetch`), fetched as one group (`GroupFetch`) in the caller's
    /// task: one submission of their requests, their answers taken and staged as they finish, and each handful
    /// staged together committed in one entry into the silo (`publishFetched`), which ends their loads. A miss
    /// costs no task, continuation or silo entry of its own. Misses whose URL (or the whole gallery) the server
    /// asked to wait for, and those whose first attempt failed for now or was a redirect, are returned: each goes
    /// on to its own job (`load(_:)`), which waits its turn and retries.
    nonisolated func fetchGroup(_ misses: [Miss]) async -> (ended: [(outcome: LoadOutcome, position: Int32)], rest: [Miss]) {
        var rest: [Miss] = []
        var grouped: [Miss] = []
        for miss in misses {
            if fetcher.serverWaits.notBefore(fetcher.server.url(for: miss.key)) != nil { rest.append(miss) } else { grouped.append(miss) }
        }
        guard !grouped.isEmpty else { return ([], rest) }
        let fetch = GroupFetch(grouped.map(\.key), fetcher: fetcher, folder: temporaryFolder, gate: gate)
        var ended: [(outcome: LoadOutcome, position: Int32)] = []
        while true {
            let finished = await fetch.next()
            if finished.isEmpty { break }
            var staged: [(miss: Miss, staging: Result<StagedAsset, any Error>)] = []
            for (index, outcome) in finished {
                switch outcome {
                case .staged(let asset): staged.append((grouped[index], .success(asset)))
                case .failed(let error): staged.append((grouped[index], .failure(error)))
                case .again(let retriesUsed):
                    var miss = grouped[index]
                    miss.retriesUsed = retriesUsed
                    rest.append(miss)
                }
            }
            if !staged.isEmpty { ended += await publishFetched(staged) }
        }
        return (ended, rest)
    }

    /// What a group fetch staged, in one turn of the silo and one wait for the committer: each asset published
    /// (`GroupCommitter.publish(_:lane:)`), each failure recorded as `publish` records it, and every load ended.
    private func publishFetched(
        _ fetched: [(miss: Miss, staging: Result<StagedAsset, any Error>)]
    ) async -> [(outcome: LoadOutcome, position: Int32)] {
        var ended: [(outcome: LoadOutcome, position: Int32)] = []
        var publishing: [(miss: Miss, staged: StagedAsset)] = []
        func fail(_ miss: Miss, _ error: any Error) {
            log.loadFailed(error)
            ended.append((finish(miss, with: .failure(error)), miss.position))
        }
        for (miss, staging) in fetched {
            switch staging {
            case .success(let staged):
                do {
                    if case .fetch(unusableOnRecord: true) = miss.plan { try index.forgetUnusableAnswer(for: miss.key) }
                    publishing.append((miss, staged))
                } catch {
                    staged.file.discard()
                    fail(miss, error)
                }
            case .failure(let error):
                recordIfUnusable(error, of: miss.key)
                fail(miss, error)
            }
        }
        let results = await committer.publish(publishing.map { ($0.staged, catalogue[tag: $0.miss.key]) })
        for ((miss, staged), result) in zip(publishing, results) {
            switch result {
            case .success:
                log.access(miss.key, hit: .network, size: staged.asset.size)
                ended.append((finish(miss, with: .success((staged.asset, .network))), miss.position))
            case .failure(let error):
                fail(miss, error)
            }
        }
        return ended
    }

    /// What the jobs of `misses` would do (`--dry-run`), decided by the rules `load` follows, with nothing fetched,
    /// written or recorded: the inspector's examination for a stored key (`FileInspector.examine`, its look off the
    /// silo), and for a key not stored the occupant of its path (what `stage` and the committer's adoption would
    /// find), all of those looked at in one job off the silo. Whether a download would be a valid PNG, or the same
    /// bytes as a file of someone's at the path, is not known without it. A miss whose file cannot be looked at has
    /// the error its real job would fail with before any request. One answer per miss, in order.
    func preview(_ misses: [Miss]) async -> [Result<PlannedAccess, SyncError>] {
        var planned = [Result<PlannedAccess, SyncError>?](repeating: nil, count: misses.count)
        var unstored: [(at: Int, path: String)] = []
        for (at, miss) in misses.enumerated() {
            do {
                let entry: IndexEntry?
                switch miss.plan {
                case .fetch: entry = nil
                case .verify(let stored, _), .looked(_, let stored, _): entry = stored
                case .decide: entry = try index.lookUp(miss.key).entry
                }
                if let entry, let access = Self.planned(by: try await inspector.examine(entry), of: entry) {
                    planned[at] = .success(access)
                } else {
                    unstored.append((at, directory.path(ofAsset: miss.key.fileName)))
                }
            } catch {
                planned[at] = .failure(error)
            }
        }
        let (status, looks) = (status, unstored)
        let occupants = await BlockingIO.run {
            looks.map { item -> Result<PathOccupant, SyncError> in
                do throws(SyncError) { return .success(try status.occupant(at: item.path)) } catch { return .failure(error) }
            }
        }
        for (item, occupant) in zip(unstored, occupants) { planned[item.at] = occupant.map(Self.plannedFetch(into:)) }
        return planned.map { $0! }  // each position was set above: by the examination, an error, or its path's look
    }

    /// A key not stored, whose path holds `occupant`: `stage` refuses a path the agent may not write; a regular file
    /// there meets the committer's adoption after the download (`GroupCommitter.adoptOrRefuse`); an empty path gets
    /// the file.
    private static func plannedFetch(into occupant: PathOccupant) -> PlannedAccess {
        if let refusal = occupant.refusal(owned: false) { return .conflict(refusal, unlessIdentical: false) }
        if occupant.kind == .regular { return .conflict("a file the agent did not write", unlessIdentical: true) }
        return .fetch(nil)
    }

    /// What `verifyOrRepair` would do with the stored file of `entry` after the inspector's `examination`; nil when
    /// the row changed meanwhile (the key is then previewed as not stored).
    private static func planned(by examination: FileInspector.Examination, of entry: IndexEntry) -> PlannedAccess? {
        if case .release(_, let occupant) = examination.change {
            return .conflict(occupant.refusal(owned: false) ?? "not a regular file", unlessIdentical: false)
        }
        switch examination.verdict {
        case .trusted: return .intact
        case .verified:
            if case .adoption = examination.change { return .adopt }
            return .intact
        case .damaged(.missing): return .fetch(.missing)
        case .damaged(let reason):
            let keepsCopy = examination.found.map { !OwnershipGuard.isOwn($0, recorded: entry.identity) } ?? false
            return .replace(reason, keepingConflictCopy: keepsCopy)
        case .changedMeanwhile: return nil
        }
    }

    private func loadInSilo(_ miss: Miss) async -> LoadOutcome {
        await end(miss) { [self] in try await perform(miss.plan, for: miss.key) }
    }

    /// The misses of one batch whose files are stored but not known intact (`Plan.verify`: their `lstat` is not the
    /// recorded fingerprint, as after a copy of DIR or its restore from a backup), looked at together: the reads and
    /// hashes in one job off the silo, what they found recorded in one transaction (`FileInspector.check(_:)`), and
    /// each file found intact ended there as a disk hit. The others (damaged, changed meanwhile, not readable) are
    /// returned: each goes on to its own job (`load(_:)`), which acts on what the look found (`Plan.looked`).
    nonisolated func verify(_ misses: [Miss]) async -> (ended: [(outcome: LoadOutcome, position: Int32)], rest: [Miss]) {
        await verifyInSilo(misses)
    }

    private func verifyInSilo(_ misses: [Miss]) async -> (ended: [(outcome: LoadOutcome, position: Int32)], rest: [Miss]) {
        var files: [(entry: IndexEntry, key: AssetKey)] = []
        var checked: [(miss: Miss, unusableOnRecord: Bool)] = []
        var rest: [Miss] = []
        for miss in misses {
            if case .verify(let entry, let unusableOnRecord) = miss.plan {
                files.append((entry, miss.key))
                checked.append((miss, unusableOnRecord))
            } else {
                rest.append(miss)
            }
        }
        var ended: [(outcome: LoadOutcome, position: Int32)] = []
        for (at, verdict) in await inspector.check(files).enumerated() {
            let (miss, unusableOnRecord) = checked[at]
            let asset: Asset
            switch verdict {
            case .success(.trusted): asset = Asset(trustedOnDisk: miss.key, size: files[at].entry.size)
            case .success(.verified(let verified)): asset = verified
            default:
                rest.append(Miss(
                    token: miss.token, plan: .looked(verdict, files[at].entry, unusableOnRecord: unusableOnRecord),
                    position: miss.position))
                continue
            }
            log.access(miss.key, hit: .disk, size: asset.size)
            ended.append((finish(miss, with: .success((asset, .disk))), miss.position))
        }
        return (ended, rest)
    }

    /// Runs the rest of a miss's job in the silo, then ends its load and answers the listings attached to it.
    private func end(_ miss: Miss, after work: () async throws -> (Asset, Hit)) async -> LoadOutcome {
        let result: Result<(Asset, Hit), any Error>
        do {
            result = .success(try await work())
        } catch {
            log.loadFailed(error)
            result = .failure(error)
        }
        return finish(miss, with: result)
    }

    /// Ends the load of `miss` with `result` and answers the listings attached to it.
    private func finish(_ miss: Miss, with result: Result<(Asset, Hit), any Error>) -> LoadOutcome {
        let key = miss.key
        let attached = memory.endLoad(miss.token, with: result.map(\.0)).attachedListings
        switch result {
        case .success((let asset, let hit)):
            let position = attached > 0 ? feedPosition(of: key) : nil
            for _ in 0..<attached { log.access(key, at: position, hit: .memory, size: asset.size) }
            return LoadOutcome(key: key, hit: hit, bytes: asset.size, failure: nil, attachedListings: attached)
        case .failure(let error):
            for _ in 0...attached { log.failure(key, error) }
            return LoadOutcome(key: key, hit: nil, bytes: 0, failure: error, attachedListings: attached)
        }
    }

    /// Gives up misses that were decided but whose jobs never started (the pass was cancelled): callers waiting for
    /// them try again.
    func abandon(_ misses: [Miss]) {
        for miss in misses { _ = memory.endLoad(miss.token, with: .failure(CancellationError())) }
    }

    private func perform(_ plan: Plan, for key: AssetKey) async throws -> (Asset, Hit) {
        switch plan {
        case .fetch(let unusableOnRecord):
            return try await fetch(key, owned: false, unusableOnRecord: unusableOnRecord)
        case .verify(let entry, let unusableOnRecord):
            return try await verifyOrRepair(entry, of: key, unusableOnRecord: unusableOnRecord)
        case .looked(let verdict, let entry, let unusableOnRecord):
            return try await act(on: try verdict.get(), entry: entry, of: key, unusableOnRecord: unusableOnRecord)
        case .decide:
            return try await loadBelowMemory(key)
        }
    }

    // MARK: - Single accesses

    /// The asset for `key`, from memory, disk or network, logged as one `event=asset` line. The line is
    /// written where the work happened: by the access that read the disk or the network (before anyone
    /// waiting on it resumes), or here for memory hits.
    func image(_ key: AssetKey) async throws -> (Asset, Hit) {
        do {
            let (asset, hit) = try await memory.asset(for: key) { [self] in
                try await countingFailure { try await loadBelowMemory(key) }
            }
            if hit == .memory { log.access(key, at: feedPosition(of: key), hit: hit, size: asset.size) }
            return (asset, hit)
        } catch {
            log.failure(key, error)
            throw error
        }
    }

    /// Fetches `key` from the network even if memory and disk have it, and stores it: a repair.
    ///
    /// With a `reason` it is a repair: the load logs `event=repair` before it stores the new file (before the
    /// `hit=network` line), unless its off-silo job finds the file intact (its `lstat`, in the same job as the fetch,
    /// is the fingerprint recorded when the agent last wrote it: another repair of the same damage finished after
    /// this one was decided), which is a disk hit and fetches nothing. A refetch that joins a load in flight
    /// logs no repair line: that load is the repair. `priority: .urgent` for a repair a person's change asked for:
    /// its transfer starts before those of a pass still waiting for a slot.
    func refetch(
        _ key: AssetKey, reason: DamageReason? = nil, priority: RequestPriority = .normal
    ) async throws -> Asset {
        do {
            let repair: ImageLoader.Load = { [self] in
                let look = try index.lookUp(key)
                if look.entry == nil { try refuseUnusableAnswer(look.unusable, of: key) }
                return try await countingFailure {
                    try await fetch(
                        key, owned: look.entry != nil, unusableOnRecord: look.unusable != nil, priority: priority,
                        recordedSize: look.entry?.size, repair: reason, intactIf: reason == nil ? nil : look.entry?.fingerprint)
                }
            }
            var (asset, hit) = try await memory.reload(key, load: repair)
            // A repair that joined a load in flight (the pass's) got that load's file, which may be the very one
            // whose deletion asked for the repair: a person deleted it between its rename and the load's end. It is
            // looked at again, and repaired for real unless it is intact.
            while hit == .memory, reason != nil, !(try await isIntactOnDisk(key)) {
                (asset, hit) = try await memory.reload(key, load: repair)
            }
            if hit == .memory { log.access(key, at: feedPosition(of: key), hit: hit, size: asset.size) }
            return asset
        } catch {
            log.failure(key, error)
            throw error
        }
    }

    /// Whether `key`'s file is on disk with the fingerprint its row records (no read). Throws when the index cannot
    /// be read; a file that cannot be looked at is not intact here, and the repair that follows looks again and
    /// reports the error.
    private func isIntactOnDisk(_ key: AssetKey) async throws(SyncError) -> Bool {
        guard let entry = try index.lookUp(key).entry else { return false }
        return await isIntact(entry)
    }

    /// Fetches `key` again because its feed tag changed: conditionally (`If-None-Match`/`If-Modified-Since`
    /// with the validators the server gave for the stored bytes), so an unchanged image costs a `304`. The
    /// file is replaced, atomically as always, only when the bytes differ; the row takes the new tag either way.
    func refresh(_ key: AssetKey) async throws {
        guard let entry = try index.entry(for: key) else { return }
        let tag = catalogue[tag: key]
        do {
            _ = try await memory.reload(key) { [self] in
                try await countingFailure { try await loadFresh(key, stored: entry, tag: tag) }
            }
        } catch {
            log.failure(key, error)
            throw error
        }
    }

    // MARK: - Below memory

    /// Disk, then network, for a key decided now (the index could not be read when its batch was answered, or a
    /// single access).
    private func loadBelowMemory(_ key: AssetKey) async throws -> (Asset, Hit) {
        let look = try index.lookUp(key)
        if let entry = look.entry {
            return try await verifyOrRepair(entry, of: key, unusableOnRecord: look.unusable != nil)
        }
        try refuseUnusableAnswer(look.unusable, of: key)
        return try await fetch(key, owned: false, unusableOnRecord: look.unusable != nil)
    }

    /// A stored key whose file is not known intact: checked (read and hashed off the silo), answered from disk when
    /// good, repaired from the network when damaged.
    private func verifyOrRepair(_ entry: IndexEntry, of key: AssetKey, unusableOnRecord: Bool) async throws -> (Asset, Hit) {
        try await act(on: try await inspector.check(entry, key: key), entry: entry, of: key, unusableOnRecord: unusableOnRecord)
    }

    /// What a look at the stored file of `key` (`entry`) found, acted on: a disk hit, or a repair.
    private func act(
        on verdict: FileInspector.FileVerdict, entry: IndexEntry, of key: AssetKey, unusableOnRecord: Bool
    ) async throws -> (Asset, Hit) {
        switch verdict {
        case .trusted:
            let asset = Asset(trustedOnDisk: key, size: entry.size)
            log.access(key, hit: .disk, size: asset.size)
            return (asset, .disk)
        case .verified(let asset):
            log.access(key, hit: .disk, size: asset.size)
            return (asset, .disk)
        case .changedMeanwhile:
            // The row went while the file was read (a purge): decided again from what the index says now.
            if try index.entry(named: entry.name) == nil { return try await loadBelowMemory(key) }
            log.repair(of: key, reason: .corrupt)
        case .damaged(let reason):
            log.repair(of: key, reason: reason)
        }
        return try await fetch(key, owned: true, unusableOnRecord: unusableOnRecord)
    }

    /// The one job off the silo (the path checked, then fetch, validate, hash, write a temporary file), then the
    /// group commit. `owned`: the index has a row for `key`; `recordedSize`: the size of the file it records.
    /// `repair`: a repair, logged (`event=repair`) once the job has not found the file intact: with `intactIf`, the
    /// fingerprint the row records, the job's look at the path finds it back as the agent wrote it when another
    /// repair of the same damage finished after this one was decided, and that is a disk hit, nothing fetched.
    private func fetch(
        _ key: AssetKey, owned: Bool, unusableOnRecord: Bool, priority: RequestPriority = .normal,
        recordedSize: Int? = nil, repair: DamageReason? = nil, intactIf recorded: FileFingerprint? = nil
    ) async throws -> (Asset, Hit) {
        let staging: Result<Staging, any Error>
        do {
            staging = .success(try await Self.stage(
                key, owned: owned, fetcher: fetcher, status: status, directory: directory, folder: temporaryFolder,
                priority: priority, gate: gate, recordedSize: recordedSize, intactIf: recorded))
        } catch {
            staging = .failure(error)
        }
        if case .success(.intact) = staging, let recordedSize {
            let asset = Asset(trustedOnDisk: key, size: recordedSize)
            log.access(key, hit: .disk, size: asset.size)
            return (asset, .disk)
        }
        if let repair { log.repair(of: key, reason: repair) }
        return try await publish(
            key, staging: staging, unusableOnRecord: unusableOnRecord, lane: priority == .urgent ? .repair : .pass)
    }

    /// What a fetch staged goes to its path (`GroupCommitter.publish`); a path found taken is a conflict, and an
    /// answer that was no image is recorded, so the next listings are refused without asking.
    private func publish(
        _ key: AssetKey, staging: Result<Staging, any Error>, unusableOnRecord: Bool,
        lane: GroupCommitter.Lane = .pass
    ) async throws -> (Asset, Hit) {
        let staged: StagedAsset
        switch staging {
        case .success(.staged(let fetched)):
            staged = fetched
        case .success(.taken(let path, let refusal, let occupant)):
            throw log.conflict(key, path: path, what: refusal, occupant: occupant)
        case .success(.intact):
            throw SyncError(.system, "\(key) was found intact without a recorded size")  // `fetch` answers it first
        case .failure(let error):
            recordIfUnusable(error, of: key)
            throw error
        }
        if unusableOnRecord { try index.forgetUnusableAnswer(for: key) }
        try await committer.publish(staged, tag: catalogue[tag: key], lane: lane)
        log.access(key, hit: .network, size: staged.asset.size)
        return (staged.asset, .network)
    }

    /// An answer that was no image is recorded, so the next listings of `key` are refused without asking.
    private func recordIfUnusable(_ error: any Error, of key: AssetKey) {
        guard ImageLoader.answeredButUnusable(error) else { return }
        do {
            try index.recordUnusableAnswer(
                UnusableAnswer(tag: catalogue[tag: key], reason: String(describing: error), answeredAt: Date()), for: key)
        } catch let trouble {
            // The access fails for what the server answered; not recording it costs one more request later.
            log.indexTrouble(trouble, while: "recording that \(key) answered with no image")
        }
    }

    /// What the off-silo job of a fetch came to.
    private enum Staging: Sendable {
        case staged(StagedAsset)
        /// The path holds something the agent may not write: nothing was fetched.
        case taken(path: String, refusal: String, occupant: PathOccupant)
        /// The path holds the file the row records, as recorded (`intactIf`): nothing was fetched.
        case intact
    }

    /// Off the silo: `AssetFetcher.fetchAndStage`. The agent's own path (`owned`, a repair) is looked at first
    /// (one `lstat`, whose error is an error): no fetch when something it may not write sits there. A path the index
    /// does not give the agent (every file of a cold pass) is not: the committer only ever renames onto it with
    /// `RENAME_NOREPLACE`, which refuses whatever is there, and looks at what is in the way only then, so a status
    /// call per file would buy nothing but a download saved in the rare case of a taken path.
    ///
    /// Nothing waits for DIR's deletions to pause before the fetch: only the temporary file waits for the `gate`
    /// (`TemporaryFileGate`: a repair a person's change asked for, `.urgent`, writes and flushes it with no name
    /// meanwhile; any other keeps a small body in its buffer), so a lone deletion's quiet and its fetch overlap. A
    /// repair of a file recorded as larger than the write buffer could not wait in it: then the gate is waited for
    /// first.
    @concurrent
    private nonisolated static func stage(
        _ key: AssetKey, owned: Bool, fetcher: AssetFetcher, status: PathStatus, directory: SyncDirectory,
        folder: TemporaryFolder, priority: RequestPriority, gate: RenameGate, recordedSize: Int? = nil, retriesUsed: Int = 0,
        intactIf recorded: FileFingerprint? = nil
    ) async throws -> Staging {
        if owned {
            let path = directory.path(ofAsset: key.fileName)
            let occupant = try status.occupant(at: path)
            if let refusal = occupant.refusal(owned: true) { return .taken(path: path, refusal: refusal, occupant: occupant) }
            if let recorded, occupant.kind == .regular, try status.fingerprint(of: path) == recorded { return .intact }
        }
        let repair = priority == .urgent
        if repair, (recordedSize ?? .max) > StreamedBodyFile.bufferSize, let gone = await gate.waitUntilOpen() {
            throw SyncError(.system, "\(directory.root) is being removed (\(gone)): nothing is put back into it", path: directory.root)
        }
        return .staged(try await fetcher.fetchAndStage(
            key, in: folder, priority: priority, gate: repair ? .unnamedWhileShut(gate) : .waitsInBuffer(gate),
            retriesUsed: retriesUsed))
    }

    /// A changed feed tag: fetched conditionally, stored only when the bytes differ. A `200` goes to a temporary
    /// file and is validated from it as a miss's body is (`AssetFetcher.fetchAndStage`), and goes to its path
    /// through the same commit (`GroupCommitter.publish`); unchanged bytes only drop their temporary file.
    private func loadFresh(_ key: AssetKey, stored entry: IndexEntry, tag: String?) async throws -> (Asset, Hit) {
        let validators = HTTPValidators(etag: entry.etag, lastModified: entry.lastModified)
        let result: String
        let asset: Asset
        let received: Int
        switch try await fetcher.fetchAndStage(
            key, in: temporaryFolder, validators: validators.isEmpty ? nil : validators)
        {
        case .notModified:
            (result, received) = ("not_modified", 0)
            asset = Asset(trustedOnDisk: key, size: entry.size)
            try retag(entry, tag: tag, validators: validators)
        case .staged(let staged):
            (asset, received) = (staged.asset, staged.asset.size)
            if staged.asset.sha256 == entry.sha256 {
                result = "unchanged"
                staged.file.discard()
                try retag(entry, tag: tag, validators: staged.validators)
            } else {
                result = "updated"
                try await committer.publish(staged, tag: tag)
            }
        }
        log.refreshed(key, result: result, bytes: received)
        return (asset, .network)
    }

    /// Records a new tag and validators on a row, if the row is still the one that was looked at.
    private func retag(_ entry: IndexEntry, tag: String?, validators: HTTPValidators) throws(SyncError) {
        guard var now = try index.entry(named: entry.name), now.sha256 == entry.sha256 else { return }
        now.tag = tag
        now.etag = validators.etag
        now.lastModified = validators.lastModified
        try index.put(now)
    }

    /// `emojiart_sync_failures_total` counts loads: the accesses that join a load share its one failure.
    private func countingFailure(_ load: () async throws -> (Asset, Hit)) async throws -> (Asset, Hit) {
        do {
            return try await load()
        } catch {
            log.loadFailed(error)
            throw error
        }
    }

    // MARK: - Decisions

    /// Whether the file `entry` records is the one the agent last wrote or verified: one `fstatat` on io decides
    /// (device, inode, size, mtime, ctime of a regular file, as recorded). False otherwise (a failed look included:
    /// the access then goes the long way, where the error is an error). The row may change while io looks: the
    /// caller holds the key's load, so only a removal can, and a removed file is then not found intact.
    private func isIntact(_ entry: IndexEntry) async -> Bool {
        guard let fingerprint = entry.fingerprint else { return false }
        let (status, path) = (status, directory.path(ofAsset: entry.name))
        return await BlockingIO.run { (try? status.fingerprint(of: path)) == fingerprint }
    }

    /// Throws when `answer` (the one on record for `key`) says its URL answered with something that is not an
    /// image, under the tag the feed gives it now, less than `RetryPolicy.unusableAnswer` ago: asking again would
    /// get the same.
    private func refuseUnusableAnswer(_ answer: UnusableAnswer?, of key: AssetKey) throws {
        if let refusal = refusal(for: answer, of: key) { throw refusal }
    }

    /// The refusal of an access of `key` for `answer` on record (see `refuseUnusableAnswer`), or nil.
    private func refusal(for answer: UnusableAnswer?, of key: AssetKey) -> UnusableAnswerOnRecord? {
        guard let answer, answer.tag == catalogue[tag: key] else { return nil }
        let retryAt = answer.answeredAt.addingTimeInterval(memory.retryPolicy.unusableAnswer.seconds)
        return retryAt > Date() ? UnusableAnswerOnRecord(key: key, answer: answer, retryAt: retryAt) : nil
    }

    // MARK: - States

    /// The feed's assets in exactly one state each: `ok` (stored and not failing), `failing` (the last access
    /// failed; retried at its time), `missing` (neither: not fetched yet, or damaged and waiting for its repair).
    /// The three add up to the feed's size. Costs a look at the catalogue per failing key (an index lookup only
    /// before the catalogue's first walk of a feed).
    func assetStates() throws(SyncError) -> (ok: Int, missing: Int, failing: Int) {
        let basis = [memory.failuresVersion, UInt64(catalogue.storedInFeed), catalogue.version]
        if let cached = assetStatesCache, cached.basis == basis { return cached.states }
        var failing = 0
        var failingStored = 0
        for key in memory.failingKeysUnordered where catalogue.contains(key) {
            failing += 1
            if let stored = catalogue.isStored(key) {
                if stored { failingStored += 1 }
            } else if try index.entry(for: key) != nil {
                failingStored += 1
            }
        }
        let ok = catalogue.storedInFeed - failingStored
        let states = (ok, catalogue.keys.count - ok - failing, failing)
        assetStatesCache = (basis, states)
        return states
    }

}

/// What one batch visit answered: the hits (already logged and counted), the refusals of failures on record
/// (already logged), the misses registered in flight (one job each: `AccessPipeline.load`), and listings of keys
/// another caller is loading (waited for: `AccessPipeline.image`).
struct BatchAnswer: Sendable {
    /// Entries answered, by their position in the feed (the key is `Listings.keys[position]`: none is retained here).
    var answered: [(position: Int32, hit: Hit, bytes: Int)] = []
    /// Refusals, with their error: formatted only where it is shown (a failing item is listed at every pass).
    var refused: [(position: Int32, failure: any Error)] = []
    var loads: [AccessPipeline.Miss] = []
    var joins: [AccessPipeline.Join] = []
}
