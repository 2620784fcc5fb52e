/// A feed's distinct keys in feed order, each one's position (its index in `keys`) and each one's tag
/// (`checksum`): what the agent keeps of a feed, built once by the reader off the silo.
///
/// A position is how the hot paths find a key's state: per-key tables are arrays indexed by it (the catalogue's
/// recorded fingerprints, a pass's tallies), so a pass over a feed of 100,000 keys listed three times probes no
/// dictionary per listing. `positions` is the one table keyed by key: it turns a key that came from elsewhere (a
/// watcher's path, an index row) into its position. The agent keeps a feed for as long as it runs, so each table
/// is kept at its size, not at the capacity its reader reserved as it read.
struct FeedState: Sendable {
    /// The distinct keys, in order of first appearance.
    let keys: [AssetKey]
    /// Each key's index in `keys`.
    private let positions: KeyIndexTable
    /// Each key's tag, by position; nil for an item without one.
    let tags: [FeedTag?]

    /// A key listed twice where a feed's keys must be distinct.
    struct RepeatedKey: Error {
        let key: AssetKey
    }

    init() {
        keys = []
        positions = KeyIndexTable()
        tags = []
    }

    /// The feed of `keys` with `tags`, by position; throws if a key appears twice.
    init(distinctKeys keys: [AssetKey], tags: [FeedTag?]) throws(RepeatedKey) {
        precondition(keys.count == tags.count, "a feed's tables disagree")
        let keys = keys.compacted()
        var positions = KeyIndexTable(capacity: keys.count)
        for (position, key) in keys.enumerated() {
            if positions.update(Int32(position), for: key, keyAt: { keys[Int($0)] }) != nil { throw RepeatedKey(key: key) }
        }
        self.keys = keys
        self.positions = positions
        self.tags = tags.compacted()
    }

    /// The feed of distinct `keys` with `tags` (a key listed again is dropped; a tag for a key not among `keys`
    /// is ignored).
    init(keys: [AssetKey], tags: [AssetKey: String]) {
        var positions = KeyIndexTable(capacity: keys.count)
        var distinct: [AssetKey] = []
        distinct.reserveCapacity(keys.count)
        for key in keys where positions.index(of: key, keyAt: { distinct[Int($0)] }) == nil {
            distinct.append(key)
            positions.update(Int32(distinct.count - 1), for: key) { distinct[Int($0)] }
        }
        let keys = distinct.compacted()
        self.keys = keys
        self.positions = positions
        self.tags = keys.map { tags[$0].map(FeedTag.init) }
    }

    /// How many distinct keys the feed has.
    var count: Int { keys.count }

    /// `key`'s position, if it is one of the feed's.
    func position(of key: AssetKey) -> Int? {
        positions.index(of: key) { keys[Int($0)] }.map(Int.init)
    }

    /// `key`'s position, looked for at `likely` first: a feed that changed a tag or a checksum lists its keys at
    /// the places they had, and comparing the key there (the same storage: `===`) costs no probe of the table.
    func position(of key: AssetKey, likely: Int) -> Int? {
        if likely < keys.count, keys[likely] == key { return likely }
        return position(of: key)
    }

    /// Whether `key` is one of the feed's.
    func contains(_ key: AssetKey) -> Bool { position(of: key) != nil }

    /// The feed's own key equal to `key` (same url) and its position, if it is in the feed: its file name is the
    /// one the feed's accesses use.
    func member(_ key: AssetKey) -> (key: AssetKey, position: Int)? {
        guard let position = position(of: key) else { return nil }
        return (keys[position], position)
    }

    /// The feed's key whose url is `url` and whose file is `fileName` (what an index row names: the row is that
    /// key's file only if it has the key's file name), and its position.
    func member(url: UnsafeBufferPointer<UInt8>, fileName: UnsafeBufferPointer<UInt8>) -> (key: AssetKey, position: Int)? {
        guard let found = positions.index(hash: AssetKey.hash(ofURL: url), where: { keys[Int($0)].hasURL(url) }) else {
            return nil
        }
        let member = keys[Int(found)]
        return member.hasFileName(fileName) ? (member, Int(found)) : nil
    }

    /// The feed's tag for `key`, if it is in the feed and has one.
    subscript(key: AssetKey) -> FeedTag? {
        position(of: key).flatMap { tags[$0] }
    }

    /// Whether this feed has the same items as `other`: a feed that came back with a new `ETag` and the same
    /// items is not a new feed, and nothing that depends on it needs working out again. Cheap when the keys are
    /// the ones the last decode reused (the arrays' elements are the same objects).
    func matches(_ other: FeedState) -> Bool {
        keys == other.keys && tags == other.tags
    }
}
