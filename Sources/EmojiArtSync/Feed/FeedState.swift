/// A feed's distinct keys in feed order, each one's position (its index in `keys`) and each one's tag
/// (`checksum`): what the agent keeps of a feed, built once by the reader off the silo.
///
/// A position is how the hot paths find a key's state: per-key tables are arrays indexed by it (the catalogue's
/// recorded fingerprints, a pass's tallies), so a pass over a feed of 100,000 keys listed three times probes no
/// dictionary per listing. `positions` is the one dictionary: it turns a key that came from elsewhere (a
/// watcher's path, an index row) into its position.
struct FeedState: Sendable {
    /// The distinct keys, in order of first appearance.
    let keys: [AssetKey]
    /// Each key's index in `keys`.
    private let positions: [AssetKey: Int32]
    /// Each key's tag, by position; nil for an item without one.
    let tags: [FeedTag?]

    init() {
        keys = []
        positions = [:]
        tags = []
    }

    /// The reader's feed: `positions` and `tags` already made for `keys`.
    init(keys: [AssetKey], positions: [AssetKey: Int32], tags: [FeedTag?]) {
        precondition(keys.count == positions.count && keys.count == tags.count, "a feed's tables disagree")
        self.keys = keys
        self.positions = positions
        self.tags = tags
    }

    /// The feed of distinct `keys` with `tags` (a tag for a key not among `keys` is ignored).
    init(keys: [AssetKey], tags: [AssetKey: String]) {
        var positions: [AssetKey: Int32] = [:]
        positions.reserveCapacity(keys.count)
        var distinct: [AssetKey] = []
        distinct.reserveCapacity(keys.count)
        for key in keys where positions[key] == nil {
            positions[key] = Int32(distinct.count)
            distinct.append(key)
        }
        self.keys = distinct
        self.positions = positions
        self.tags = distinct.map { tags[$0].map(FeedTag.init) }
    }

    /// How many distinct keys the feed has.
    var count: Int { keys.count }

    /// `key`'s position, if it is one of the feed's.
    func position(of key: AssetKey) -> Int? {
        positions[key].map(Int.init)
    }

    /// Whether `key` is one of the feed's.
    func contains(_ key: AssetKey) -> Bool { positions[key] != nil }

    /// The feed's own key equal to `key` (same url) and its position, if it is in the feed: its file name is the
    /// one the feed's accesses use.
    func member(_ key: AssetKey) -> (key: AssetKey, position: Int)? {
        guard let found = positions.index(forKey: key) else { return nil }
        let (member, position) = positions[found]
        return (member, Int(position))
    }

    /// The feed's key whose url is `url` and whose file is `fileName` (what an index row names: the row is that
    /// key's file only if it has the key's file name), and its position.
    func member(url: UnsafeBufferPointer<UInt8>, fileName: UnsafeBufferPointer<UInt8>) -> (key: AssetKey, position: Int)? {
        guard let member = member(AssetKey(probing: url)), member.key.hasFileName(fileName) else { return nil }
        return member
    }

    /// The feed's tag for `key`, if it is in the feed and has one.
    subscript(key: AssetKey) -> FeedTag? {
        positions[key].flatMap { tags[Int($0)] }
    }

    /// Whether this feed has the same items as `other`: a feed that came back with a new `ETag` and the same
    /// items is not a new feed, and nothing that depends on it needs working out again. Cheap when the keys are
    /// the ones the last decode reused (the arrays' elements are the same objects).
    func matches(_ other: FeedState) -> Bool {
        keys == other.keys && tags == other.tags
    }
}
