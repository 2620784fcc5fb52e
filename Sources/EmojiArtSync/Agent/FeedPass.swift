/// Accesses every entry of a feed (duplicates included, as the book's app does) a batch at a time: the silo
/// answers each batch's hits in one visit (`ImageDatabase.answer(_:)`), and the misses run as jobs, at most
/// `window` at once, while the next batches are answered. A key listed again after its load started joins that
/// load (a memory hit); one listed after it finished is answered from memory in its batch.
///
/// Before each batch the pass lets urgent work go first (`UrgentLane`): a repair never waits behind a pass.
/// Its caller begins and ends the database's pass (`ImageDatabase.beginPass()`), around whatever else the pass does:
/// within it each asset is logged once, however often the feed lists it.
struct FeedPass {
    /// Entries per silo visit: large enough that a pass of 300,000 entries is a few hundred visits, small
    /// enough that one visit (an index lookup, an `lstat` and a log line per entry) stays a few milliseconds.
    static let batchSize = 256

    let database: ImageDatabase
    let window: Int

    /// What one access came to.
    struct Outcome: Sendable {
        let key: AssetKey
        let hit: Hit?
        let bytes: Int
        let failure: String?
    }

    /// Runs the pass; `collect` sees every outcome on the caller's isolation, a batch's hits and refusals first. Returns the
    /// most misses that were loading at once.
    @discardableResult
    func run(
        _ entries: [AssetKey], isolation: isolated (any Actor)? = #isolation, collect: (Outcome) -> Void = { _ in }
    ) async -> Int {
        let database = database
        let window = max(1, window)
        var peak = 0
        await withTaskGroup(of: Outcome.self) { group in
            var alive = 0
            var start = entries.startIndex
            var batch = 0
            while start < entries.endIndex, !Task.isCancelled {
                let end = min(start + Self.batchSize, entries.endIndex)
                await database.storage.status.hooks?.runBeforePassBatch(batch)
                batch += 1
                await database.urgentLane.waitUntilClear()
                let answer = await database.answer(entries[start..<end])
                start = end
                for hit in answer.answered { collect(Outcome(key: hit.key, hit: hit.hit, bytes: hit.bytes, failure: nil)) }
                for refusal in answer.refused {
                    collect(Outcome(key: refusal.key, hit: nil, bytes: 0, failure: refusal.failure))
                }
                for key in answer.misses {
                    if alive == window, let outcome = await group.next() {
                        alive -= 1
                        collect(outcome)
                    }
                    if Task.isCancelled { break }
                    group.addTask { await Self.access(key, in: database) }
                    alive += 1
                    peak = max(peak, alive)
                }
            }
            while let outcome = await group.next() { collect(outcome) }
        }
        return peak
    }

    private static func access(_ key: AssetKey, in database: ImageDatabase) async -> Outcome {
        do {
            let (asset, hit) = try await database.image(key)
            return Outcome(key: key, hit: hit, bytes: asset.size, failure: nil)
        } catch {
            return Outcome(key: key, hit: nil, bytes: 0, failure: String(describing: error))
        }
    }
}
