/// The feed the database keeps now: its distinct keys and each key's tag (`checksum`), in the structures the
/// accepted feed already built, not copies of them.
///
/// One structure answers both questions asked per key (is it in the feed, what is its tag): the tags
/// dictionary holds every key that has a tag, and only the keys without one (none, in a gallery that sends a
/// `checksum` with every item) need a set of their own. At 100,000 keys a second set of every key cost about
/// 4 MiB that the agent held for as long as it ran.
struct FeedState: Sendable {
    /// The distinct keys, in feed order (the feed's own array, shared, not copied).
    let keys: [AssetKey]
    /// Each key's tag, for the keys that have one.
    private let tags: [AssetKey: String]
    /// Keys of the feed without a tag.
    private let untagged: Set<AssetKey>

    init(keys: [AssetKey] = [], tags: [AssetKey: String] = [:]) {
        let untagged = keys.count == tags.count ? [] : Set(keys.lazy.filter { tags[$0] == nil })
        self.keys = keys
        self.untagged = untagged
        if keys.count == tags.count + untagged.count {
            self.tags = tags
        } else {
            // A tag for a key that is not in the feed would make that key look like one of the feed's.
            let members = Set(keys)
            self.tags = tags.filter { members.contains($0.key) }
        }
    }

    /// How many distinct keys the feed has.
    var count: Int { keys.count }

    /// Whether `key` is one of the feed's.
    func contains(_ key: AssetKey) -> Bool {
        tags[key] != nil || (!untagged.isEmpty && untagged.contains(key))
    }

    /// The feed's own key equal to `key` (same url), if it is in the feed: its file name is the one the feed's
    /// accesses use.
    func member(_ key: AssetKey) -> AssetKey? {
        if let found = tags.index(forKey: key) { return tags[found].key }
        guard !untagged.isEmpty, let found = untagged.firstIndex(of: key) else { return nil }
        return untagged[found]
    }

    /// The feed's tag for `key`, if it is in the feed and has one.
    subscript(key: AssetKey) -> String? { tags[key] }

    /// Whether this is the feed of `keys` and `tags`: a feed that came back with a new `ETag` and the same
    /// items is not a new feed, and nothing that depends on it needs working out again. Cheap when the keys are
    /// the ones the last decode reused (a string comparison that finds the same storage).
    func matches(keys: [AssetKey], tags: [AssetKey: String]) -> Bool {
        self.keys == keys && self.tags == tags
    }
}
