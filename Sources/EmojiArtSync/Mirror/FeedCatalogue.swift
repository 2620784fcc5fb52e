/// The feed the agent keeps, and what the index holds of it: which of its keys have a file (`storedInFeed`), which
/// are stored with another tag than the feed's (stale), which are not stored at all, and which rows belong to no
/// key of the feed any more (gone).
///
/// Owns the `FeedState`, its version, the count of stored feed keys and the last `FeedSweep`. The count follows
/// every row the index adds or removes (`AssetIndex.rowObserver`), whoever changes the index, so it is written in
/// one place. A new feed costs one sequential walk of the index, which finds all four answers at once; until the
/// feed changes again they are kept current from the rows changed since (`AssetIndex.rowsChanged(since:)`), so a
/// pass walks the index once, not once per question. The walk also keeps the fingerprint each stored feed key's
/// row records (`recordedFingerprint(of:)`), kept current as rows change: a warm pass compares it with the file's
/// `lstat`, taken off the silo, instead of looking each key up.
@SyncActor
public final class FeedCatalogue {
    private let index: AssetIndex
    /// The feed kept now.
    private(set) var feed = FeedState()
    /// Bumped whenever `feed` is replaced by a feed with other items.
    private(set) var version: UInt64 = 0
    /// How many of the feed's keys have a file in the index: `status` reads it at any gallery size for free.
    public private(set) var storedInFeed = 0
    /// The last sweep, and the feed version and index row changes it describes.
    private var sweep: (version: UInt64, rowChanges: UInt64, result: FeedSweep)?
    /// The fingerprint each stored feed key's row records, where it records one: filled by the walk, updated with
    /// every row change. A key missing here is looked up in the index.
    private var recorded: [AssetKey: FileFingerprint] = [:]

    init(index: AssetIndex) {
        self.index = index
        index.rowObserver = { [unowned self] change in self.rowChanged(change) }
    }

    /// The feed's distinct keys, in feed order.
    public var keys: [AssetKey] { feed.keys }
    /// The feed's tag for `key`.
    subscript(tag key: AssetKey) -> String? { feed[key] }
    func contains(_ key: AssetKey) -> Bool { feed.contains(key) }
    /// The fingerprint the index records for `key`'s file, when the catalogue knows it (nil: look it up).
    func recordedFingerprint(of key: AssetKey) -> FileFingerprint? { recorded[key] }

    /// Takes the keys and tags of a newly accepted feed. A feed with the same items as the one kept (a new
    /// `ETag`, the same bytes) changes nothing: the one kept stays, and so does what was worked out from it.
    /// Otherwise the index is walked once (`sweep()`). Returns whether the items changed.
    @discardableResult
    public func replace(_ keys: [AssetKey], tags: [AssetKey: String]) throws(SyncError) -> Bool {
        if version > 0, feed.matches(keys: keys, tags: tags) { return false }
        install(keys, tags: tags)
        _ = try sweepIndex()
        return true
    }

    /// `replace`, with the comparison of the items (about 50 ms at 100,000) made on the blocking-I/O pool, so that
    /// the silo serves repairs meanwhile. Returns whether the items changed.
    public func replaceComparingOffSilo(_ keys: [AssetKey], tags: [AssetKey: String]) async throws(SyncError) -> Bool {
        let (kept, keptVersion) = (feed, version)
        if keptVersion > 0, await BlockingIO.run({ kept.matches(keys: keys, tags: tags) }), version == keptVersion {
            return false
        }
        install(keys, tags: tags)
        _ = try sweepIndex()
        return true
    }

    private func install(_ keys: [AssetKey], tags: [AssetKey: String]) {
        feed = FeedState()  // the old one goes before the new one is built: the peak holds one of them
        recorded = [:]
        feed = FeedState(keys: keys, tags: tags)
        version &+= 1
        sweep = nil
    }

    /// What the index holds of the feed now. One walk of the index for a new feed (or when more rows changed
    /// than the index remembers); else the last sweep brought up to date from the rows changed since and a
    /// lookup of each key that was stale.
    public func current() throws(SyncError) -> FeedSweep {
        guard let last = sweep, last.version == version else { return try sweepIndex() }
        if last.rowChanges == index.rowChanges, last.result.stale.isEmpty { return last.result }
        guard let changed = index.rowsChanged(since: last.rowChanges) else { return try sweepIndex() }
        var result = last.result
        var unstored = Set(result.unstored)
        var gone = Set(result.gone)
        var stale = Set(result.stale)
        try index.readTransaction { () throws(SyncError) in
            for (url, name) in changed {
                guard let key = try? AssetKey(indexedURL: url, fileName: name) else { continue }
                let row = try index.entry(named: name)
                let present = row?.key == url
                if let member = feedKey(url, name: name) {
                    if present { unstored.remove(member) } else { unstored.insert(member) }
                } else if present {
                    gone.insert(key)
                } else {
                    gone.remove(key)
                }
            }
            // Tags change without rows coming or going (a refresh retags its row): each key found stale is
            // looked up again, and so is each changed one.
            for key in stale.union(changed.compactMap { feedKey($0.key, name: $0.name) }) {
                if let recorded = try index.entry(for: key)?.tag, recorded != feed[key] {
                    stale.insert(key)
                } else {
                    stale.remove(key)
                }
            }
        }
        result.unstored = unstored.sorted()
        result.gone = gone.sorted()
        result.stale = stale.sorted()
        sweep = (version, index.rowChanges, result)
        return result
    }

    /// One walk of the index: every row is stored-in-feed (with the feed's tag or stale), or gone; every feed key
    /// without a row is unstored. A row stored without a tag (adopted, or imported from an old manifest) takes the
    /// feed's tag as it is. Recounts `storedInFeed`.
    private func sweepIndex() throws(SyncError) -> FeedSweep {
        var result = FeedSweep()
        var stored = Set<AssetKey>(minimumCapacity: min(index.count, feed.count))
        var untagged: [(name: String, tag: String)] = []
        var fingerprints: [AssetKey: FileFingerprint] = [:]
        fingerprints.reserveCapacity(min(index.count, feed.count))
        let current = feed
        try index.forEachRow { url, name, recordedTag, fingerprint in
            guard let member = Self.feedKey(url, name: name, in: current) else {
                if let key = try? AssetKey(indexedURL: url, fileName: name) { result.gone.append(key) }
                return
            }
            stored.insert(member)
            if let fingerprint { fingerprints[member] = fingerprint }
            guard let tag = current[member], recordedTag != tag else { return }
            if recordedTag == nil { untagged.append((name, tag)) } else { result.stale.append(member) }
        }
        recorded = fingerprints
        if !untagged.isEmpty {
            try index.transaction { () throws(SyncError) in
                for (name, tag) in untagged { try index.setTag(tag, named: name) }
            }
        }
        result.unstored = current.keys.filter { !stored.contains($0) }.sorted()
        result.gone.sort()
        result.stale.sort()
        storedInFeed = stored.count
        sweep = (version, index.rowChanges, result)
        return result
    }

    /// Keeps `storedInFeed` true as rows come and go; a write that was rolled back makes it count again.
    private func rowChanged(_ change: AssetIndex.RowChange) {
        switch change {
        case .added(let url, let name, let fingerprint):
            guard let member = feedKey(url, name: name) else { return }
            storedInFeed += 1
            recorded[member] = fingerprint
        case .updated(let url, let name, let fingerprint):
            guard let member = feedKey(url, name: name) else { return }
            recorded[member] = fingerprint
        case .removed(let url, let name):
            guard let member = feedKey(url, name: name) else { return }
            storedInFeed -= 1
            recorded[member] = nil
        case .unknown:
            sweep = nil
            recorded = [:]
            storedInFeed = (try? recount()) ?? storedInFeed  // the next sweep counts again in any case
        }
    }

    private func recount() throws(SyncError) -> Int {
        var stored = 0
        let current = feed
        try index.forEachKey { url, name, _ in
            if Self.feedKey(url, name: name, in: current) != nil { stored += 1 }
        }
        return stored
    }

    /// The feed's key that the row of `url` and file `name` is the file of, if any (what `index.entry(for:)`
    /// finds for it: the same url, at the key's file name).
    func feedKey(_ url: String, name: String) -> AssetKey? {
        Self.feedKey(url, name: name, in: feed)
    }

    private static func feedKey(_ url: String, name: String, in feed: FeedState) -> AssetKey? {
        guard let probe = try? AssetKey(indexedURL: url, fileName: name), let member = feed.member(probe),
            member.fileName == name
        else { return nil }
        return member
    }
}

/// What the index holds of the feed, from one walk (`FeedCatalogue.current()`), each list sorted.
public struct FeedSweep: Sendable {
    /// Feed keys with no file in the index.
    public var unstored: [AssetKey] = []
    /// Feed keys whose file was stored under another tag than the feed's now: refreshed.
    public var stale: [AssetKey] = []
    /// Keys of rows that are no key of the feed: their files are removed (behind `--max-delete`).
    public var gone: [AssetKey] = []
}
