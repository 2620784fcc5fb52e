/// The keys one pass has already answered from the memory cache (a memory hit, or a disk hit it then kept there),
/// with their sizes, by position in the pass's feed: a later listing of such a key in the same pass is a memory
/// hit answered from this table alone.
///
/// The feed lists every key three times, so two listings in three of a warm pass, or of the pass a `SIGHUP` asks
/// for, are repeats. Positions repeat in no order, and answering one through the cache touched five tables at
/// random (the cache hint, the feed's key, the cache's slot and its recency neighbours, the key's own allocation):
/// a cache miss each, most of the silo's time in such a pass (docs/BENCHMARKS.md). A repeat here reads 4 bytes.
///
/// An entry is only good while the cache has removed and replaced nothing since the table began
/// (`MemoryCache.removals`): a key noted here is then certainly still cached, with the size noted. Once the cache
/// removes anything (an eviction, a repair's new record, a purge) the table answers nothing more for that pass,
/// whose listings go through the cache as any other. A repeat answered here does not make its key the most
/// recently used again: the key's first listing in the pass did, and a pass's listings of one key are one access
/// to the feed's item as far as eviction goes.
///
/// A value owned by the `AccessPipeline`, in the silo.
struct PassAnswers: Sendable {
    private var pass: UInt64 = 0
    private var version: UInt64 = 0
    /// The cache's removals when the table began: the table holds only while they are still the same.
    private var removalsAtStart: UInt64 = 0
    /// Per position: 0 for a key not answered from memory yet in the pass, else its size plus one.
    private var sizes: [UInt32] = []

    /// Makes the table pass `pass`'s, over the feed of `version` with `count` keys, unless it is already; `removals`
    /// is the cache's count of removals now.
    mutating func begin(pass: UInt64, version: UInt64, count: Int, removals: UInt64) {
        guard pass != self.pass || version != self.version || count != sizes.count else { return }
        self.pass = pass
        self.version = version
        removalsAtStart = removals
        sizes.removeAll(keepingCapacity: true)
        sizes.append(contentsOf: repeatElement(0, count: count))
    }

    /// The size of the key at `position`, if the pass has answered it from memory and the cache, whose removals
    /// are now `removals`, certainly still holds it.
    func size(at position: Int32, pass: UInt64, version: UInt64, removals: UInt64) -> Int? {
        guard removals == removalsAtStart, pass == self.pass, version == self.version, Int(position) < sizes.count
        else { return nil }
        let noted = sizes[Int(position)]
        return noted == 0 ? nil : Int(noted - 1)
    }

    /// Notes that the pass answered the key at `position` from memory, or kept it there, with `size` bytes.
    mutating func note(_ size: Int, at position: Int32, pass: UInt64, version: UInt64) {
        guard pass == self.pass, version == self.version, Int(position) < sizes.count, size >= 0,
            size < Int(UInt32.max)
        else { return }
        sizes[Int(position)] = UInt32(size + 1)
    }
}
