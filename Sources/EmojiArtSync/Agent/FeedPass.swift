import DequeModule

/// Accesses every entry of a feed (duplicates included, as the book's app does) a batch at a time: the silo
/// answers each batch in one visit (`AccessPipeline.answer(_:pass:)`), deciding every miss there and registering
/// it in flight, and the misses run as jobs of this pass while fewer than `window` are loading, as the next
/// batches are answered: the keys of a batch that are not stored as one job (`AccessPipeline.fetchGroup`), the
/// stored files to verify as another, any other miss as a job of its own. A key listed again while this pass loads it is attached to that load and answered when it ends (a
/// memory hit, no task); one listed after it finished is answered from memory in its batch.
///
/// Before each batch the pass lets urgent work go first (`UrgentLane`): a repair never waits behind a pass.
/// Its caller begins and ends the log's pass (`AccessLog.beginPass()`), around whatever else the pass does:
/// within it each asset is logged once, however often the feed lists it.
struct FeedPass {
    /// Entries per silo visit: large enough that a pass of 300,000 entries is a few hundred visits, small
    /// enough that one visit (an index lookup, an `lstat` and a log line per entry) stays a few milliseconds.
    static let batchSize = 256

    let core: MirrorCore
    let window: Int

    /// What one access came to.
    struct Outcome: Sendable {
        /// The key's position in the feed (`GalleryFeed.uniqueKeys`): what identifies it (no key is carried, so
        /// a pass of 300,000 listings retains and releases none for its outcomes).
        let position: Int32
        let hit: Hit?
        let bytes: Int
        /// Why the access failed; formatted only by a caller that shows it (`--once`'s report).
        let failure: (any Error)?
    }

    /// The most misses loading at once, and the most jobs held decided but not started (what the pass's queue
    /// costs in memory: a job is about 270 bytes).
    struct Peaks: Sendable {
        var loading = 0
        var queued = 0
    }

    /// Runs the pass; `collect` sees every outcome, a batch's hits and refusals first. Returns its peaks.
    ///
    /// The pass itself runs on the cooperative pool, not in the silo: it enters the silo once per batch (to answer
    /// it), and a finished miss does not wake the silo to be collected, so a miss costs the silo only its own
    /// entries (`SiloJobTests`). `collect` is therefore `@Sendable` (`--once` counts into a lock-guarded tally).
    ///
    /// Two batches are answered at once (`answersAhead`): while the silo decides one, the next one's files are
    /// looked at on the I/O pool and the last one's outcomes collected here, so the three overlap instead of
    /// taking turns.
    ///
    /// `feedVersion` is the catalogue's version of the feed whose positions `feed` lists (the caller has just
    /// given the catalogue this feed): the catalogue's tables are read by position while it keeps that version.
    @discardableResult
    nonisolated func run(
        _ feed: GalleryFeed, feedVersion: UInt64, collect: @escaping @Sendable (Outcome) -> Void = { _ in }
    ) async -> Peaks {
        let pipeline = core.pipeline
        let window = max(1, window)
        var peaks = Peaks()
        let pass = await pipeline.beginPass()
        let listings = AccessPipeline.Listings(keys: feed.uniqueKeys, feedVersion: feedVersion, pass: pass)
        let entries = feed.entryPositions
        func report(_ outcome: AccessPipeline.LoadOutcome, position: Int32) {
            collect(Outcome(position: position, hit: outcome.hit, bytes: outcome.bytes, failure: outcome.failure))
            for _ in 0..<outcome.attachedListings {
                collect(Outcome(
                    position: position, hit: outcome.hit.map { _ in .memory }, bytes: outcome.bytes, failure: outcome.failure))
            }
        }
        await withTaskGroup(of: Finished.self) { group in
            var loading = 0
            var answering = 0
            var start = entries.startIndex
            var batch = 0
            // Jobs decided and not started yet, in order. A queue that drops each job as it starts: during a cold
            // pass there is always a job waiting, so an array emptied only when it ran dry kept every job of the
            // pass (90,000 misses held 54 MB at the end of a 100,000-asset pass).
            var jobs = JobQueue()
            var notStarted: [AccessPipeline.Miss] = []
            while true {
                // Batches are answered ahead only while the misses decided so far have room to start: a cold
                // pass does not decide the whole feed before its first transfers end.
                while answering < Self.answersAhead, jobs.accesses < window, start < entries.endIndex,
                    !Task.isCancelled
                {
                    await core.hooks?.runBeforePassBatch(batch)
                    batch += 1
                    await core.urgentLane.waitUntilClear()
                    let slice = entries[start..<min(start + Self.batchSize, entries.endIndex)]
                    start = slice.endIndex
                    group.addTask { .answered(await pipeline.answer(slice, of: listings)) }
                    answering += 1
                }
                while loading < window, let job = jobs.popFirst() {
                    if Task.isCancelled {
                        notStarted += job.misses
                        continue
                    }
                    switch job {
                    case .load(let miss):
                        group.addTask { .loaded(await pipeline.load(miss), miss.position) }
                        loading += 1
                    case .join(let join):
                        group.addTask { .loaded(await Self.access(join.key, in: pipeline), join.position) }
                        loading += 1
                    case .verify(let misses):
                        group.addTask { .verified(await pipeline.verify(misses), count: misses.count) }
                        loading += misses.count
                    case .fetch(let misses):
                        group.addTask { .verified(await pipeline.fetchGroup(misses), count: misses.count) }
                        loading += misses.count
                    }
                    peaks.loading = max(peaks.loading, loading)
                }
                guard let finished = await group.next() else { break }
                switch finished {
                case .answered(let answer):
                    answering -= 1
                    for hit in answer.answered {
                        collect(Outcome(position: hit.position, hit: hit.hit, bytes: hit.bytes, failure: nil))
                    }
                    for refusal in answer.refused {
                        collect(Outcome(position: refusal.position, hit: nil, bytes: 0, failure: refusal.failure))
                    }
                    // The files to verify are looked at together (`AccessPipeline.verify`), the keys not stored are
                    // fetched together (`AccessPipeline.fetchGroup`); any other miss is a job of its own.
                    var verifies: [AccessPipeline.Miss] = []
                    var fetches: [AccessPipeline.Miss] = []
                    for miss in answer.loads {
                        switch miss.plan {
                        case .verify: verifies.append(miss)
                        case .fetch: fetches.append(miss)
                        case .looked, .decide: jobs.append(.load(miss))
                        }
                    }
                    if !verifies.isEmpty { jobs.append(.verify(verifies)) }
                    if fetches.count == 1 { jobs.append(.load(fetches[0])) } else if !fetches.isEmpty { jobs.append(.fetch(fetches)) }
                    for join in answer.joins { jobs.append(.join(join)) }
                    peaks.queued = max(peaks.queued, jobs.accesses)
                case .loaded(let outcome, let position):
                    loading -= 1
                    report(outcome, position: position)
                case .verified(let verified, let count):
                    loading -= count
                    for (outcome, position) in verified.ended { report(outcome, position: position) }
                    for miss in verified.rest { jobs.append(.load(miss)) }
                }
            }
            // Stopping: misses decided but never started are given up, so nothing waits for them.
            while let job = jobs.popFirst() { notStarted += job.misses }
            if !notStarted.isEmpty { await pipeline.abandon(notStarted) }
        }
        await pipeline.endPass(pass)
        return peaks
    }

    /// Batches answered at once.
    static let answersAhead = 2

    private enum Finished: Sendable {
        case answered(BatchAnswer)
        case loaded(AccessPipeline.LoadOutcome, Int32)
        /// A group of files to verify, or of keys to fetch: the misses it ended, those that go on as jobs of their
        /// own, and how many misses the group was.
        case verified((ended: [(outcome: AccessPipeline.LoadOutcome, position: Int32)], rest: [AccessPipeline.Miss]), count: Int)
    }

    /// The dry run's pass (`--dry-run`): the batches are answered as `run` answers them (`AccessPipeline.answer`:
    /// memory, the recorded fingerprint, failures on record, then a miss), and the job of each miss is previewed
    /// (`AccessPipeline.preview`) instead of run, one at a time: nothing is fetched, written or recorded. The misses
    /// stay in flight to the end, so later listings of a key attach to its miss as in a real pass; then they are
    /// given up.
    nonisolated func preview(_ feed: GalleryFeed, feedVersion: UInt64, into plan: DryRunPlan) async {
        let pipeline = core.pipeline
        let pass = await pipeline.beginPass()
        let listings = AccessPipeline.Listings(keys: feed.uniqueKeys, feedVersion: feedVersion, pass: pass)
        let entries = feed.entryPositions
        var misses: [AccessPipeline.Miss] = []
        var start = entries.startIndex
        while start < entries.endIndex, !Task.isCancelled {
            let end = min(start + Self.batchSize, entries.endIndex)
            let answer = await pipeline.answer(entries[start..<end], of: listings)
            start = end
            for refusal in answer.refused { plan.noteRefused(listings.keys[Int(refusal.position)], refusal.failure) }
            misses.append(contentsOf: answer.loads)
            for (miss, planned) in zip(answer.loads, await pipeline.preview(answer.loads)) {
                switch planned {
                case .success(let access): plan.note(miss.key, access)
                case .failure(let error): plan.noteRefused(miss.key, error)
                }
            }
        }
        await pipeline.abandon(misses)
        await pipeline.endPass(pass)
    }

    /// Jobs decided and not started, in order, and how many accesses they hold (a group job holds many): what
    /// bounds answering ahead.
    private struct JobQueue {
        private var jobs = Deque<Job>()
        private(set) var accesses = 0

        mutating func append(_ job: Job) {
            jobs.append(job)
            accesses += job.accesses
        }

        mutating func popFirst() -> Job? {
            guard let job = jobs.popFirst() else { return nil }
            accesses -= job.accesses
            return job
        }
    }

    private enum Job {
        case load(AccessPipeline.Miss)
        case join(AccessPipeline.Join)
        /// The misses of a batch whose stored files are not known intact, looked at together.
        case verify([AccessPipeline.Miss])
        /// The misses of a batch that are not stored, fetched together.
        case fetch([AccessPipeline.Miss])

        /// The accesses the job answers.
        var accesses: Int {
            switch self {
            case .load, .join: 1
            case .verify(let misses), .fetch(let misses): misses.count
            }
        }

        /// The misses the job would end: given up when it never starts.
        var misses: [AccessPipeline.Miss] {
            switch self {
            case .load(let miss): [miss]
            case .join: []
            case .verify(let misses), .fetch(let misses): misses
            }
        }
    }

    /// A listing of a key another caller is loading: waits for it as a single access.
    private static func access(_ key: AssetKey, in pipeline: AccessPipeline) async -> AccessPipeline.LoadOutcome {
        do {
            let (asset, hit) = try await pipeline.image(key)
            return .init(key: key, hit: hit, bytes: asset.size, failure: nil, attachedListings: 0)
        } catch {
            return .init(key: key, hit: nil, bytes: 0, failure: error, attachedListings: 0)
        }
    }
}
