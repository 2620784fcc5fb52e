import Logging

/// What one pass over the feed did, for its one `event=pass` summary line, and which keys it has logged.
///
/// The feed lists every item three times (the book's gallery does), so a pass of 100,000 assets makes 300,000
/// accesses: one `hit=` line per key and pass keeps the man page's promise (every asset accessed has its line,
/// with `key=`) at a third of the bytes, and the accesses not written are counted here and said in the summary
/// (`repeats=`). Likewise a key's failure is written once per pass, and one on record (`remembered=true`) or the
/// same failure again, once written, goes to debug at later passes and retries and is counted (`remembered=`).
struct PassTally: Sendable {
    let started = ContinuousClock.now
    /// Bytes of asset bodies received when the pass began (`fetched=` is what it received).
    let bytesAtStart: Int
    /// Accesses by the layer that served them, written or not.
    var hits = HitCounts()
    /// Memory hits of keys whose line the pass had already written: counted, not written.
    var repeats = 0
    /// Keys whose `hit=` line the pass wrote, by their position in the feed of `positionsVersion` (one flag a
    /// key, no hashing for the 300,000 listings of a large feed), and by key for accesses made without a position.
    private var loggedPositions: [Bool] = []
    private var positionsVersion: UInt64?
    private var logged: Set<AssetKey> = []
    /// Keys that failed in the pass, written or not; and by position in the feed of `positionsVersion`, where the
    /// failure had one, so that a repeat refusal is known without its key.
    private(set) var failing: Set<AssetKey> = []
    private var failedPositions: [Bool] = []
    /// Failures not written again (at debug only): one on record, or the same failure again, whose line the key
    /// had already had.
    var remembered = 0
    var repairs = 0

    init(bytesAtStart: Int) {
        self.bytesAtStart = bytesAtStart
    }

    /// Counts an access served from `hit`; returns whether it gets a line (false: a repeat of a key already logged).
    mutating func noteAccess(_ key: AssetKey, at position: FeedPosition?, hit: Hit) -> Bool {
        hits.add(hit)
        if markLogged(key, at: position) || hit != .memory { return true }
        repeats += 1
        return false
    }

    /// Counts a memory hit of the key at `position`, if the pass has written its line already (a repeat); returns
    /// false, counting nothing, if it has not: that access is counted, and maybe written, as any other.
    mutating func noteRepeat(at position: FeedPosition) -> Bool {
        guard positionsVersion == position.version, position.index < loggedPositions.count,
            loggedPositions[position.index]
        else { return false }
        hits.add(.memory)
        repeats += 1
        return true
    }

    /// Counts a failure of `key`; returns whether it is the key's first in the pass.
    mutating func noteFailure(_ key: AssetKey, at position: FeedPosition?) -> Bool {
        if let position, positionsVersion == nil || positionsVersion == position.version {
            positionsVersion = position.version
            Self.set(position.index, in: &failedPositions)
        }
        return failing.insert(key).inserted
    }

    /// Whether the key at `position` has failed in the pass already: a repeat refusal, which counts nothing.
    /// `mutating` only so that the log's tally is read in place: a call on a copy of it copied its five tables, a
    /// retain and a release each, at every refused listing.
    mutating func isRepeatFailure(at position: FeedPosition) -> Bool {
        positionsVersion == position.version && position.index < failedPositions.count
            && failedPositions[position.index]
    }

    /// Sets the flag at `index`, growing `flags` (by doubling) to hold it.
    private static func set(_ index: Int, in flags: inout [Bool]) {
        if index >= flags.count {
            flags.append(contentsOf: repeatElement(false, count: max(index + 1, 2 * flags.count) - flags.count))
        }
        flags[index] = true
    }

    /// Marks `key` logged; returns whether it was not yet. A position of another feed than the pass's first one
    /// (the feed was replaced during the pass) counts by key: at worst a repeat gets a line, never an asset none.
    private mutating func markLogged(_ key: AssetKey, at position: FeedPosition?) -> Bool {
        guard let position, positionsVersion == nil || positionsVersion == position.version else {
            return logged.insert(key).inserted
        }
        positionsVersion = position.version
        guard position.index >= loggedPositions.count || !loggedPositions[position.index] else { return false }
        Self.set(position.index, in: &loggedPositions)
        return logged.isEmpty || !logged.contains(key)
    }

    /// The fields of `event=pass`: hits by layer, repeats not written, failing keys, failures on record not written
    /// again, repairs, bytes fetched and the pass's duration.
    func summary(bytesNow: Int) -> Logger.Metadata {
        [
            "event": "pass",
            "memory": .stringConvertible(hits.memory), "disk": .stringConvertible(hits.disk),
            "network": .stringConvertible(hits.network), "repeats": .stringConvertible(repeats),
            "failing": .stringConvertible(failing.count), "remembered": .stringConvertible(remembered),
            "repaired": .stringConvertible(repairs), "fetched": .stringConvertible(bytesNow - bytesAtStart),
            "ms": .stringConvertible((ContinuousClock.now - started).milliseconds),
        ]
    }
}
