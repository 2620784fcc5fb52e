/// Accesses every entry of a feed (duplicates included, as the book's app does) a batch at a time: the silo
/// answers each batch in one visit (`AccessPipeline.answer(_:pass:)`), deciding every miss there and registering
/// it in flight, and the misses run as jobs of this pass, at most `window` at once, while the next batches are
/// answered. A key listed again while this pass loads it is attached to that load and answered when it ends (a
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
        let key: AssetKey
        let hit: Hit?
        let bytes: Int
        /// Why the access failed; formatted only by a caller that shows it (`--once`'s report).
        let failure: (any Error)?
    }

    /// Runs the pass; `collect` sees every outcome, a batch's hits and refusals first. Returns the most misses that
    /// were loading at once.
    ///
    /// The pass itself runs on the cooperative pool, not in the silo: it enters the silo once per batch (to answer
    /// it), and a finished miss does not wake the silo to be collected, so a miss costs the silo only its own
    /// entries (`SiloJobTests`). `collect` is therefore `@Sendable` (`--once` counts into a lock-guarded tally).
    @discardableResult
    nonisolated func run(_ entries: [AssetKey], collect: @escaping @Sendable (Outcome) -> Void = { _ in }) async -> Int {
        let pipeline = core.pipeline
        let window = max(1, window)
        var peak = 0
        let pass = await pipeline.beginPass()
        func report(_ outcome: AccessPipeline.LoadOutcome) {
            collect(Outcome(key: outcome.key, hit: outcome.hit, bytes: outcome.bytes, failure: outcome.failure))
            for _ in 0..<outcome.attachedListings {
                collect(Outcome(key: outcome.key, hit: outcome.hit.map { _ in .memory }, bytes: outcome.bytes, failure: outcome.failure))
            }
        }
        await withTaskGroup(of: AccessPipeline.LoadOutcome.self) { group in
            var alive = 0
            var start = entries.startIndex
            var batch = 0
            var notStarted: [AccessPipeline.Miss] = []
            while start < entries.endIndex, !Task.isCancelled {
                let end = min(start + Self.batchSize, entries.endIndex)
                await core.hooks?.runBeforePassBatch(batch)
                batch += 1
                await core.urgentLane.waitUntilClear()
                let answer = await pipeline.answer(entries[start..<end], pass: pass)
                start = end
                for hit in answer.answered { collect(Outcome(key: hit.key, hit: hit.hit, bytes: hit.bytes, failure: nil)) }
                for refusal in answer.refused {
                    collect(Outcome(key: refusal.key, hit: nil, bytes: 0, failure: refusal.failure))
                }
                var jobs: [Job] = answer.loads.map(Job.load) + answer.joins.map(Job.join)
                while !jobs.isEmpty {
                    if alive == window, let outcome = await group.next() {
                        alive -= 1
                        report(outcome)
                    }
                    let job = jobs.removeFirst()
                    if Task.isCancelled {
                        if case .load(let miss) = job { notStarted.append(miss) }
                        continue
                    }
                    switch job {
                    case .load(let miss): group.addTask { await pipeline.load(miss) }
                    case .join(let key): group.addTask { await Self.access(key, in: pipeline) }
                    }
                    alive += 1
                    peak = max(peak, alive)
                }
            }
            // Stopping: misses decided but never started are given up, so nothing waits for them.
            if !notStarted.isEmpty { await pipeline.abandon(notStarted) }
            while let outcome = await group.next() { report(outcome) }
        }
        return peak
    }

    /// The dry run's pass (`--dry-run`): the batches are answered as `run` answers them (`AccessPipeline.answer`:
    /// memory, the recorded fingerprint, failures on record, then a miss), and the job of each miss is previewed
    /// (`AccessPipeline.preview`) instead of run, one at a time: nothing is fetched, written or recorded. The misses
    /// stay in flight to the end, so later listings of a key attach to its miss as in a real pass; then they are
    /// given up.
    nonisolated func preview(_ entries: [AssetKey], into plan: DryRunPlan) async {
        let pipeline = core.pipeline
        let pass = await pipeline.beginPass()
        var misses: [AccessPipeline.Miss] = []
        var start = entries.startIndex
        while start < entries.endIndex, !Task.isCancelled {
            let end = min(start + Self.batchSize, entries.endIndex)
            let answer = await pipeline.answer(entries[start..<end], pass: pass)
            start = end
            for refusal in answer.refused { plan.noteRefused(refusal.key, refusal.failure) }
            for miss in answer.loads {
                misses.append(miss)
                do {
                    plan.note(miss.key, try await pipeline.preview(miss))
                } catch {
                    plan.noteRefused(miss.key, error)
                }
            }
        }
        await pipeline.abandon(misses)
    }

    private enum Job {
        case load(AccessPipeline.Miss)
        case join(AssetKey)
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
