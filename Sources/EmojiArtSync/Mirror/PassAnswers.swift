/// What one pass has already answered for each key of its feed, by position: a memory hit (or a disk hit it then
/// kept in memory) with the asset's size, or the refusal of a failure on record. A later listing of such a key in
/// the same pass is answered from this table alone.
///
/// The feed lists every key three times, so two listings in three of a warm pass, or of the pass a `SIGHUP` asks
/// for, are repeats. Positions repeat in no order, and answering one through the cache touched five tables at
/// random (the cache hint, the feed's key, the cache's slot and its recency neighbours, the key's own allocation):
/// a cache miss each, most of the silo's time in such a pass (docs/BENCHMARKS.md). A repeat here reads 4 bytes; a
/// refusal's error is boxed once per pass, not once per listing.
///
/// A memory hit noted here is only good while the cache has removed and replaced nothing since the table began
/// (`MemoryCache.removals`): the key is then certainly still cached, with the size noted. Once the cache removes
/// anything (an eviction, a repair's new record, a purge) the table answers no memory hit for the rest of the
/// pass, whose listings go through the cache as any other. A repeat answered here does not make its key the most
/// recently used again: the key's first listing in the pass did, and a pass's listings of one key are one access
/// to the feed's item as far as eviction goes. A refusal is only good while the failures on record are the ones it
/// was noted with (`FailureLedger.version`) and its retry time has not come.
///
/// A value owned by the `AccessPipeline`, in the silo, from a pass's first batch to its end.
struct PassAnswers: Sendable {
    /// A failure on record that refused the key's first listing in the pass.
    struct Refusal: Sendable {
        let failure: any Error
        let retryAt: ContinuousClock.Instant
        /// The failure ledger's version when the refusal was made.
        let failuresVersion: UInt64
    }

    enum Repeat {
        case memoryHit(size: Int)
        case refusal(any Error)
    }

    private var pass: UInt64 = 0
    private var version: UInt64 = 0
    /// The cache's removals when the table began: memory hits hold only while they are still the same.
    private var removalsAtStart: UInt64 = 0
    /// Per position: 0 for a key not answered yet in the pass, a size plus one (below `refusedFlag`), or
    /// `refusedFlag` with the refusal's index in `refusals`.
    private var entries: [UInt32] = []
    private var refusals: [Refusal] = []
    private static let refusedFlag: UInt32 = 1 << 31

    /// Makes the table pass `pass`'s, over the feed of `version` with `count` keys, unless it is already; `removals`
    /// is the cache's count of removals now.
    mutating func begin(pass: UInt64, version: UInt64, count: Int, removals: UInt64) {
        guard pass != self.pass || version != self.version || count != entries.count else { return }
        self.pass = pass
        self.version = version
        removalsAtStart = removals
        entries.removeAll(keepingCapacity: true)
        entries.append(contentsOf: repeatElement(0, count: count))
        refusals.removeAll()
    }

    /// Drops the table of pass `pass` (its refusals hold their errors): an idle agent keeps none.
    mutating func end(_ pass: UInt64) {
        guard pass == self.pass else { return }
        self = PassAnswers()
    }

    /// What the pass answered for the key at `position`, if it still holds: a memory hit while the cache, whose
    /// removals are now `removals`, certainly still holds the key; a refusal while the failure ledger's version is
    /// still `failuresVersion` and `isWaiting` says its retry time is still to come.
    func answered(
        at position: Int32, pass: UInt64, version: UInt64, removals: UInt64, failuresVersion: UInt64,
        isWaiting: (ContinuousClock.Instant) -> Bool
    ) -> Repeat? {
        guard pass == self.pass, version == self.version, Int(position) < entries.count else { return nil }
        let entry = entries[Int(position)]
        if entry == 0 { return nil }
        if entry & Self.refusedFlag != 0 {
            let at = Int(entry & ~Self.refusedFlag)  // the refusal is read in place: only its error is copied out
            guard refusals[at].failuresVersion == failuresVersion, isWaiting(refusals[at].retryAt) else { return nil }
            return .refusal(refusals[at].failure)
        }
        return removals == removalsAtStart ? .memoryHit(size: Int(entry - 1)) : nil
    }

    /// Notes that the pass answered the key at `position` from memory, or kept it there, with `size` bytes.
    mutating func note(_ size: Int, at position: Int32, pass: UInt64, version: UInt64) {
        guard pass == self.pass, version == self.version, Int(position) < entries.count, size >= 0,
            size < Int(Self.refusedFlag - 1)
        else { return }
        entries[Int(position)] = UInt32(size + 1)
    }

    /// Notes that the pass refused the key at `position` with `refusal`.
    mutating func note(_ refusal: Refusal, at position: Int32, pass: UInt64, version: UInt64) {
        guard pass == self.pass, version == self.version, Int(position) < entries.count,
            refusals.count < Int(Self.refusedFlag)
        else { return }
        entries[Int(position)] = Self.refusedFlag | UInt32(refusals.count)
        refusals.append(refusal)
    }
}
