/// A least-recently-used map of asset records bounded by what they cost in memory (`Asset.recordCost` each).
///
/// A plain value type (the `ImageLoader` owns the one that matters). It keeps what an access answers from memory
/// (the key, the size, the dimensions), never an asset's bytes or digest: no access reads image bytes from memory
/// (`Asset.withoutBytes`). Inserting past the limit evicts the least recently used records first.
///
/// Every operation is O(1), whatever the number of entries (a pass over a 100,000-item feed makes hundreds of
/// thousands of them): the assets live in an array of slots chained in recency order by index (a doubly linked
/// list without a node allocation per entry), and a `KeyIndexTable` finds a key's slot (4 bytes a bucket: a
/// dictionary's 12 were 1.5 MiB at 90,000 records). A use moves the slot to the
/// front; eviction takes from the back; a freed slot is reused by the next insert.
struct MemoryCache: Sendable {
    let byteLimit: Int
    private(set) var totalBytes = 0
    /// Inserts made since the cache was created (`CacheHints` counts whether it saw them all).
    private(set) var inserts: UInt64 = 0
    /// Records removed, evicted or replaced since the cache was created, and emptyings (`PassAnswers` holds only
    /// while nothing left the cache).
    private(set) var removals: UInt64 = 0

    /// One record in 32 bytes (a gallery of 100,000 keys keeps about 90,000 of them for as long as the agent
    /// runs; an `Asset` in the slot was 64).
    private struct Slot: Sendable {
        /// nil: a free slot.
        var key: AssetKey?
        var size: Int
        /// The PNG's dimensions; 0 when not known (a valid PNG is at least 1 x 1).
        var width: UInt32
        var height: UInt32
        /// Neighbours in recency order (towards the most and the least recently used), or `none`.
        var newer: Int32
        var older: Int32

        init(_ asset: Asset) {
            key = asset.key
            size = asset.size
            width = asset.width ?? 0
            height = asset.height ?? 0
            newer = MemoryCache.none
            older = MemoryCache.none
        }

        /// The record as an asset without bytes, nil for a free slot.
        var asset: Asset? {
            key.map { Asset(record: $0, size: size, width: width == 0 ? nil : width, height: height == 0 ? nil : height) }
        }
    }

    private static let none: Int32 = -1
    private var slotOfKey = KeyIndexTable()
    private var slots: ContiguousArray<Slot> = []
    /// Slots emptied by removal or eviction, reused before the array grows.
    private var freeSlots: [Int32] = []
    private var newest = MemoryCache.none
    private var oldest = MemoryCache.none

    init(byteLimit: Int) {
        self.byteLimit = max(0, byteLimit)
    }

    var count: Int { slotOfKey.count }

    /// Returns the asset and marks it most recently used.
    mutating func get(_ key: AssetKey) -> Asset? {
        guard let slot = slot(of: key) else { return nil }
        moveToFront(slot)
        return slots[Int(slot)].asset
    }

    /// `get`, looking first in `hint`, the slot the caller last found `key` in (-1: none), and setting it to the
    /// slot `key` is in (-1 when it is not cached): a caller that keeps hints finds a key again without hashing it.
    mutating func get(_ key: AssetKey, hint: inout Int32) -> Asset? {
        use(key, hint: &hint) ? slots[Int(hint)].asset : nil
    }

    /// The size recorded for `key`, found as `get(_:hint:)` finds it (and marked most recently used): what a
    /// memory hit reports, with no `Asset` made (nor its key retained) for it.
    mutating func size(of key: AssetKey, hint: inout Int32) -> Int? {
        use(key, hint: &hint) ? slots[Int(hint)].size : nil
    }

    /// `size(of:hint:)`, looking only in `hint`: for a caller that knows `key` is nowhere else if not there
    /// (complete hints, `CacheHints.isComplete`). Sets `hint` to -1 when the slot does not hold `key`.
    mutating func size(of key: AssetKey, onlyAt hint: inout Int32) -> Int? {
        use(key, onlyAt: &hint) ? slots[Int(hint)].size : nil
    }

    /// Finds `key` in slot `hint`, else by hashing it, leaves its slot in `hint` (-1: not cached) and marks it
    /// most recently used.
    private mutating func use(_ key: AssetKey, hint: inout Int32) -> Bool {
        if !(hint >= 0 && Int(hint) < slots.count && slots[Int(hint)].key == key) {
            hint = slot(of: key) ?? Self.none
            guard hint != Self.none else { return false }
        }
        moveToFront(hint)
        return true
    }

    /// Finds `key` in slot `hint` only; sets `hint` to -1 when it is not there.
    private mutating func use(_ key: AssetKey, onlyAt hint: inout Int32) -> Bool {
        guard hint >= 0, Int(hint) < slots.count, slots[Int(hint)].key == key else {
            hint = Self.none
            return false
        }
        moveToFront(hint)
        return true
    }

    /// Whether `key` is cached, without touching recency.
    func contains(_ key: AssetKey) -> Bool { slot(of: key) != nil }

    private func slot(of key: AssetKey) -> Int32? {
        slotOfKey.index(of: key) { [slots] in Self.occupant(of: $0, in: slots) }
    }

    /// The key in a slot the table holds (never a free one: a slot leaves the table before it is freed).
    private static func occupant(of slot: Int32, in slots: ContiguousArray<Slot>) -> AssetKey {
        guard let key = slots[Int(slot)].key else { preconditionFailure("the cache's table holds free slot \(slot)") }
        return key
    }

    /// Inserts or replaces the record of `asset` (its bytes and digest are not kept), then evicts until within
    /// the limit. Returns how many entries were evicted, and the slot the record is in (-1 when it was not kept:
    /// a limit below one record's cost).
    @discardableResult
    mutating func insert(_ asset: Asset) -> (evicted: Int, slot: Int32) {
        inserts &+= 1
        guard Asset.recordCost <= byteLimit else {
            remove(asset.key)
            return (0, Self.none)
        }
        let slot: Int32
        if let reused = freeSlots.popLast() {
            slot = reused
            slots[Int(slot)] = Slot(asset)
        } else {
            slot = Int32(slots.count)
            slots.append(Slot(asset))
        }
        // One hash for the key: a replaced entry's slot is freed after the new one is in.
        if let replaced = slotOfKey.update(slot, for: asset.key, keyAt: { [slots] in Self.occupant(of: $0, in: slots) }) {
            free(replaced)
        }
        link(slot)
        totalBytes += Asset.recordCost
        var evicted = 0
        while totalBytes > byteLimit, oldest != Self.none {
            let victim = oldest
            guard let key = slots[Int(victim)].key else { break }
            remove(key)
            evicted += 1
        }
        return (evicted, slots[Int(slot)].key == nil ? Self.none : slot)
    }

    mutating func remove(_ key: AssetKey) {
        guard let slot = slotOfKey.remove(key, keyAt: { [slots] in Self.occupant(of: $0, in: slots) }) else { return }
        free(slot)
    }

    /// Unlinks a slot no key maps to any more and gives it back.
    private mutating func free(_ slot: Int32) {
        removals &+= 1
        unlink(slot)
        if slots[Int(slot)].key != nil { totalBytes -= Asset.recordCost }
        slots[Int(slot)].key = nil
        freeSlots.append(slot)
    }

    /// Makes room for `count` records in all (no more than the byte limit holds) at once, so that filling the
    /// cache does not rehash it at every doubling: a warm pass inserts each of 90,000 stored files in turn.
    mutating func reserveCapacity(_ count: Int) {
        let count = min(count, byteLimit / Asset.recordCost)
        guard count > slotOfKey.capacity else { return }
        slotOfKey.reserveCapacity(count) { [slots] in Self.occupant(of: $0, in: slots) }
        slots.reserveCapacity(count)
    }

    /// Empties the cache; returns what was dropped.
    mutating func removeAll() -> (entries: Int, bytes: Int) {
        let dropped = (slotOfKey.count, totalBytes)
        removals &+= 1
        slotOfKey.removeAll()
        slots = []
        freeSlots = []
        newest = Self.none
        oldest = Self.none
        totalBytes = 0
        return dropped
    }

    // MARK: - The recency chain

    private mutating func moveToFront(_ slot: Int32) {
        guard slot != newest else { return }
        unlink(slot)
        link(slot)
    }

    /// Puts an unlinked slot in front, as the most recently used.
    private mutating func link(_ slot: Int32) {
        slots[Int(slot)].older = newest
        slots[Int(slot)].newer = Self.none
        if newest != Self.none { slots[Int(newest)].newer = slot }
        newest = slot
        if oldest == Self.none { oldest = slot }
    }

    private mutating func unlink(_ slot: Int32) {
        let newer = slots[Int(slot)].newer, older = slots[Int(slot)].older
        if newer != Self.none { slots[Int(newer)].older = older } else { newest = older }
        if older != Self.none { slots[Int(older)].newer = newer } else { oldest = newer }
        slots[Int(slot)].newer = Self.none
        slots[Int(slot)].older = Self.none
    }
}
