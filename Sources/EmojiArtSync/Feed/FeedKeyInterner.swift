#if canImport(Glibc)
import Glibc
#endif

/// The keys a feed decode has met, found by their url's bytes: a feed lists every item three times, and a
/// repeated url must cost a hash of its bytes, not a new `String` and another `AssetKey` validation.
///
/// An open-addressing table (linear probing, at most half full) whose slots hold a key's index, 32 bits of
/// its hash, and where its url's bytes sit in `urlBytes`, a copy of every key's url end to end: a probe then
/// touches a slot and those bytes, not the key's `String`. Seeded with the previous feed's keys, so a poll of an
/// unchanged feed makes no key at all and shares the last feed's key storage.
struct FeedKeyInterner {
    private struct Slot {
        /// The key's index in `keys`, or -1 for an empty slot.
        var index: Int32 = -1
        /// The upper 32 bits of the url's hash: a probe compares bytes only when these match.
        var tag: UInt32 = 0
        var offset: Int32 = 0
        var count: Int32 = 0
    }

    /// The keys, in the order they were added.
    private(set) var keys: [AssetKey] = []
    private var urlBytes: [UInt8] = []
    /// Its count is a power of two.
    private var slots: [Slot]

    init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = Array(repeating: Slot(), count: size)
        keys.reserveCapacity(capacity)
    }

    /// The hash an `AssetKey` keeps for the same url (`urlHash`), so a known key is placed without hashing it again.
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        AssetKey.hash(ofURL: bytes)
    }

    /// The index in `keys` of the key whose url is `bytes` (hashed to `hash`), if any.
    func index(of bytes: UnsafeBufferPointer<UInt8>, hash: Int) -> Int? {
        let tag = UInt32(truncatingIfNeeded: UInt(bitPattern: hash) >> 32)
        let mask = slots.count - 1
        return slots.withUnsafeBufferPointer { slots in
            urlBytes.withUnsafeBufferPointer { stored in
                var position = hash & mask
                while slots[position].index >= 0 {
                    let slot = slots[position]
                    if slot.tag == tag && Int(slot.count) == bytes.count
                        && (bytes.isEmpty || memcmp(stored.baseAddress! + Int(slot.offset), bytes.baseAddress!, bytes.count) == 0)
                    {
                        return Int(slot.index)
                    }
                    position = (position + 1) & mask
                }
                return nil
            }
        }
    }

    /// Adds `key`, whose url is `bytes` hashing to `hash` and is not in the table yet; returns its index.
    mutating func insert(_ key: AssetKey, bytes: UnsafeBufferPointer<UInt8>, hash: Int) -> Int {
        if (keys.count + 1) * 2 > slots.count { grow() }
        let slot = Slot(
            index: Int32(keys.count), tag: UInt32(truncatingIfNeeded: UInt(bitPattern: hash) >> 32),
            offset: Int32(urlBytes.count), count: Int32(bytes.count))
        keys.append(key)
        urlBytes.append(contentsOf: bytes)
        place(slot, hash: hash)
        return keys.count - 1
    }

    private mutating func place(_ slot: Slot, hash: Int) {
        var position = hash & (slots.count - 1)
        while slots[position].index >= 0 { position = (position + 1) & (slots.count - 1) }
        slots[position] = slot
    }

    /// Doubles the table; each url is hashed again (the table keeps only part of each hash).
    private mutating func grow() {
        let old = slots
        slots = Array(repeating: Slot(), count: old.count * 2)
        for slot in old where slot.index >= 0 {
            let start = Int(slot.offset)
            let hash = urlBytes[start..<start + Int(slot.count)].withUnsafeBufferPointer(Self.hash)
            place(slot, hash: hash)
        }
    }
}
