/// The feed the agent keeps, and what the index holds of it: which of its keys have a file (`storedInFeed`), which
/// are stored with another tag than the feed's (stale), which are not stored at all, and which rows belong to no
/// key of the feed any more (gone).
///
/// Owns the `FeedState`, its version, the count of stored feed keys and the last `FeedSweep`. The count follows
/// every row the index adds or removes (`AssetIndex.rowObserver`), whoever changes the index, so it is written in
/// one place. A new feed costs one sequential walk of the index, which finds all four answers at once, or no walk
/// when the last sweep still describes the index (`carriedOver(to:)`); until the feed changes again they are kept
/// current from the rows changed since (`AssetIndex.rowsChanged(since:)`), so a pass walks the index at most once,
/// not once per question. The walk also keeps the digest of the fingerprint each stored
/// feed key's row records (`recordedDigest(of:)`), kept current as rows change: a warm pass compares it with the
/// file's `lstat`, taken off the silo, instead of looking each key up.
@SyncActor
final class FeedCatalogue: IndexRowKnowledge {
    private let index: AssetIndex
    /// The feed kept now.
    private(set) var feed = FeedState()
    /// Bumped whenever `feed` is replaced by a feed with other items.
    private(set) var version: UInt64 = 0
    /// How many of the feed's keys have a file in the index: `status` reads it at any gallery size for free.
    private(set) var storedInFeed = 0
    /// The last sweep, and the feed version and index row changes it describes.
    private var sweep: (version: UInt64, rowChanges: UInt64, result: FeedSweep)?
    /// The digest of the fingerprint each stored feed key's row records (`FingerprintDigest.none` where it records
    /// none), by the key's position in `feed`: filled by the walk, updated with every row change. A key without one
    /// here is looked up in the index.
    private var recorded: [UInt64] = []
    /// Whether each feed key (by position in `feed`) has a row in the index: filled by the walk, updated with every
    /// row change; empty until the first walk (a key is then looked up). `status` asks it for each failing key four
    /// times a second during a cold sync: in the index that was a query each, 10,000 at 100,000 assets.
    private var stored: [Bool] = []
    /// Rows of no feed key added or removed since the last sweep: a gone row came or went, which only the index's
    /// change log or a walk tells (`currentFromTables(after:)` needs none).
    private var rowsChangedOutsideFeed = 0

    init(index: AssetIndex) {
        self.index = index
        index.rowObserver = { [unowned self] change in self.rowChanged(change) }
    }

    /// The feed's distinct keys, in feed order.
    var keys: [AssetKey] { feed.keys }
    /// The feed's tag for `key`.
    subscript(tag key: AssetKey) -> String? { feed[key]?.description }
    func contains(_ key: AssetKey) -> Bool { feed.contains(key) }
    /// `key`'s position in the feed kept, if it is one of its keys.
    func position(of key: AssetKey) -> Int? { feed.position(of: key) }
    /// The digest of the fingerprint the index records for `key`'s file, when the catalogue knows it (nil: look it
    /// up).
    func recordedDigest(of key: AssetKey) -> FingerprintDigest? {
        feed.position(of: key).flatMap(recordedDigest(at:))
    }
    /// The digest of the fingerprint the index records for the file of the key at `position` in the feed of
    /// `version`, when the catalogue knows it: nil when it does not, or when the feed was replaced since.
    func recordedDigest(at position: Int, version: UInt64) -> FingerprintDigest? {
        version == self.version ? recordedDigest(at: position) : nil
    }

    /// The feed's stored keys at positions `start..<start + limit`, each with the digest of the fingerprint its
    /// row records (`FingerprintDigest.none`: none), for a rescan; `isLast`: no position after these. Nil when
    /// the feed kept is not the one of `version` or no walk has filled the tables yet.
    func recordedFiles(
        from start: Int, limit: Int, version: UInt64
    ) -> (files: [(key: AssetKey, digest: UInt64)], isLast: Bool)? {
        guard version == self.version, recorded.count == feed.count, stored.count == feed.count else { return nil }
        let end = min(start + limit, feed.count)
        var files: [(key: AssetKey, digest: UInt64)] = []
        if start < end {
            for position in start..<end where stored[position] { files.append((feed.keys[position], recorded[position])) }
        }
        return (files, end == feed.count)
    }

    /// Whether `key`'s file has a row in the index, when the catalogue knows it (nil: look it up).
    func isStored(_ key: AssetKey) -> Bool? {
        guard let position = feed.position(of: key), position < stored.count else { return nil }
        return stored[position]
    }

    /// Whether the key at `position` in the feed of `version` has a row in the index, when the catalogue knows it
    /// (nil: the feed was replaced since, or no walk has filled the table yet).
    func isStored(at position: Int, version: UInt64) -> Bool? {
        version == self.version && position < stored.count ? stored[position] : nil
    }

    private func recordedDigest(at position: Int) -> FingerprintDigest? {
        position < recorded.count ? FingerprintDigest(stored: recorded[position]) : nil
    }

    /// Takes a newly accepted feed. A feed with the same items as the one kept (a new `ETag`, the same bytes)
    /// changes nothing: the one kept stays, and so does what was worked out from it. Otherwise the index is
    /// walked once (`sweep()`). Returns whether the items changed.
    @discardableResult
    func replace(_ items: FeedState) throws(SyncError) -> Bool {
        if version > 0, feed.matches(items) { return false }
        try install(items, carryingOver: true)
        return true
    }

    /// `replace`, with the index's rows read off the silo beforehand (`IndexRowSnapshot`, `--once` reads them while
    /// the feed decodes): they are matched with the feed on the blocking-I/O pool, and the silo only takes the
    /// tables. Rows read before a write of the index, or a feed replaced meanwhile, are not used: the index is then
    /// walked in the silo as `replace` walks it.
    @discardableResult
    func replace(_ items: FeedState, matching rows: IndexRowSnapshot) async throws(SyncError) -> Bool {
        if version > 0, feed.matches(items) { return false }
        let versionBefore = version
        var match: FeedSweepMatch?
        if rows.changesBefore == index.changesMade {
            // Two halves of the rows at once, on two of the pool's threads: a warm `--once` waits for the match
            // (about 0.1 s at 100,000 rows, each a probe of the feed's table) with the other core idle.
            let middle = rows.count / 2
            func matched(_ range: Range<Int>) async -> FeedSweepMatch {
                await BlockingIO.run {
                    var match = FeedSweepMatch(feed: items)
                    rows.forEach(in: range) { match.add($0) }
                    return match
                }
            }
            async let second = matched(middle..<rows.count)
            var first = await matched(0..<middle)
            first.merge(await second)
            match = first
        }
        // Reentrancy: the rows are the index's only if nothing wrote it since they were read, and the match is
        // this feed's only if no other feed was installed meanwhile.
        let current = match != nil && rows.changesBefore == index.changesMade && version == versionBefore
        install(items)
        if current, let match {
            _ = try take(match)
        } else {
            _ = try sweepIndex()
        }
        return true
    }

    /// `replace` with the feed of `keys` and `tags`.
    @discardableResult
    func replace(_ keys: [AssetKey], tags: [AssetKey: String]) throws(SyncError) -> Bool {
        try replace(FeedState(keys: keys, tags: tags))
    }

    /// `replace`, with the comparison of the items (about 50 ms at 100,000) made on the blocking-I/O pool, so that
    /// the silo serves repairs meanwhile. Returns whether the items changed.
    func replaceComparingOffSilo(_ items: FeedState) async throws(SyncError) -> Bool {
        let (kept, keptVersion) = (feed, version)
        if keptVersion > 0, await BlockingIO.run({ kept.matches(items) }), version == keptVersion {
            return false
        }
        try install(items, carryingOver: true)
        return true
    }

    /// Keeps `items` and works out what the index holds of them: from what is known of the feed kept now when
    /// `carryingOver` and the index added or removed no row since the last sweep (`carriedOver(to:)`), else by a
    /// walk of the index.
    private func install(_ items: FeedState, carryingOver: Bool) throws(SyncError) {
        let carried = carryingOver ? try carriedOver(to: items) : nil
        install(items)
        if let carried {
            _ = try take(carried)
        } else {
            _ = try sweepIndex()
        }
    }

    /// What the index holds of `items`, worked out from the feed kept now instead of a walk of the index (about
    /// 0.15 s of the silo at 100,000 rows, for a feed that changed one tag): each key of both feeds keeps its row's
    /// state and digest, found by its position in the feed kept; the rows of keys gone from the feed join the gone
    /// rows. Only the rows whose tag is not known to be the new feed's (a tag that changed, a key stale before, a
    /// key new to the feed with a gone row) are read. Nil when what is known may not be the index (no sweep of the
    /// feed kept, or a row added or removed since it).
    ///
    /// Sound because a row that takes another tag than the kept feed's drops the sweep (`tagWritten`): a key the
    /// last sweep did not find stale still has a row with the kept feed's tag.
    private func carriedOver(to items: FeedState) throws(SyncError) -> FeedSweepMatch? {
        guard let last = sweep, last.version == version, last.rowChanges == index.rowChanges,
            stored.count == feed.count, recorded.count == feed.count
        else { return nil }
        let kept = feed
        let staleBefore = Set(last.result.stale)
        var match = FeedSweepMatch(feed: items)
        var rowsToRead: [AssetKey] = []
        for (position, key) in items.keys.enumerated() {
            // A key new to the feed has no row at its name unless it is among the gone rows (read below).
            guard let before = kept.position(of: key, likely: position), stored[before] else { continue }
            let tag = items.tags[position]
            if tag == nil || (tag == kept.tags[before] && !staleBefore.contains(key)) {
                match.addStored(at: position, digest: recorded[before])
            } else {
                rowsToRead.append(key)
            }
        }
        for (position, key) in kept.keys.enumerated() where stored[position] && items.position(of: key, likely: position) == nil {
            match.addGone(key)
        }
        for gone in last.result.gone {
            // A gone row is a key's of the new feed if the key has the row's file name.
            if let member = items.member(gone), gone.withFileName({ member.key.hasFileName($0) }) {
                rowsToRead.append(member.key)
            } else {
                match.addGone(gone)
            }
        }
        try index.readTransaction { () throws(SyncError) in
            for key in rowsToRead {
                guard let entry = try index.entry(for: key) else { continue }
                var url = entry.key, name = entry.name
                let digest = entry.fingerprint.map { FingerprintDigest($0).value } ?? FingerprintDigest.none
                func add(tag: UnsafeBufferPointer<UInt8>?) {
                    url.withUTF8 { url in
                        name.withUTF8 { name in match.add(IndexSweepRow(url: url, name: name, tag: tag, digest: digest)) }
                    }
                }
                if var tag = entry.tag {
                    tag.withUTF8 { add(tag: $0) }
                } else {
                    add(tag: nil)
                }
            }
        }
        return match
    }

    private func install(_ items: FeedState) {
        feed = items
        recorded = []
        stored = []
        version &+= 1
        sweep = nil
    }

    /// What the index holds of the feed now. One walk of the index for a new feed (or when more rows changed
    /// than the index remembers); else the last sweep brought up to date from the rows changed since and a
    /// lookup of each key that was stale.
    func current() throws(SyncError) -> FeedSweep {
        guard let last = sweep, last.version == version else { return try sweepIndex() }
        if last.rowChanges == index.rowChanges, last.result.stale.isEmpty { return last.result }
        guard let changed = index.rowsChanged(since: last.rowChanges) else {
            if let result = try currentFromTables(after: last.result) { return result }
            return try sweepIndex()
        }
        var result = last.result
        var unstored = SortedKeyEdits()
        var gone = SortedKeyEdits()
        var stale = Set(result.stale)
        try index.readTransaction { () throws(SyncError) in
            for (url, name) in changed {
                guard let key = try? AssetKey(indexedURL: url, fileName: name) else { continue }
                let row = try index.entry(named: name)
                let present = row?.key == url
                if let member = feedKey(url, name: name)?.key {
                    if present { unstored.remove(member) } else { unstored.add(member) }
                } else if present {
                    gone.add(key)
                } else {
                    gone.remove(key)
                }
            }
            // Tags change without rows coming or going (a refresh retags its row): each key found stale is
            // looked up again, and so is each changed one.
            for key in stale.union(changed.compactMap { feedKey($0.key, name: $0.name)?.key }) {
                if try isStale(key) { stale.insert(key) } else { stale.remove(key) }
            }
        }
        result.unstored = unstored.applied(to: result.unstored)
        result.gone = gone.applied(to: result.gone)
        result.stale = stale.sortedByURL()
        keep(result)
        return result
    }

    /// What the index holds of the feed when more rows came and went since the last sweep than the index's change
    /// log remembers (a cold pass adds tens of thousands), from the table of stored keys the row observer kept
    /// current instead of a walk of the index in the silo: the unstored keys are those the table says have no
    /// row, the gone rows are still the last sweep's, and each key that was stale is looked up again. Nil when the
    /// table may not be the index: no walk filled it for this feed, or a row of no feed key came or went since
    /// (only a walk finds which).
    ///
    /// Sound because a row that takes another tag than the kept feed's drops the sweep (`tagWritten`): a key the
    /// last sweep did not find stale still has a row with the kept feed's tag, or none.
    private func currentFromTables(after last: FeedSweep) throws(SyncError) -> FeedSweep? {
        guard rowsChangedOutsideFeed == 0, stored.count == feed.count else { return nil }
        var result = last
        var unstored: [AssetKey] = []
        for (position, isStored) in stored.enumerated() where !isStored { unstored.append(feed.keys[position]) }
        result.unstored = unstored.sortedByURL()
        var stale: [AssetKey] = []
        try index.readTransaction { () throws(SyncError) in
            for key in last.stale where try isStale(key) { stale.append(key) }
        }
        result.stale = stale
        keep(result)
        return result
    }

    /// Whether `key`'s row records another tag than the feed's (a row without a tag takes the feed's).
    private func isStale(_ key: AssetKey) throws(SyncError) -> Bool {
        guard let recorded = try index.entry(for: key)?.tag else { return false }
        return FeedTag(recorded) != feed[key]
    }

    /// Keeps `result` as the sweep of the feed kept and of the index as it is now.
    private func keep(_ result: FeedSweep) {
        sweep = (version, index.rowChanges, result)
        rowsChangedOutsideFeed = 0
        index.forgetRowChanges(through: index.rowChanges)
    }

    /// Walks of the whole index made since start (`sweepIndex()`): what a test counts.
    private(set) var walks = 0

    /// One walk of the index, in the silo, matched with the feed kept (`FeedSweepMatch`). Recounts `storedInFeed`.
    func sweepIndex() throws(SyncError) -> FeedSweep {
        walks += 1
        var match = FeedSweepMatch(feed: feed)
        try index.forEachRow { match.add($0) }
        return try take(match)
    }

    /// Takes what a walk of the index found for the feed kept: the tables of stored keys and recorded
    /// fingerprints, the count, the sweep; a row stored without a tag takes the feed's as it is.
    private func take(_ found: FeedSweepMatch) throws(SyncError) -> FeedSweep {
        var match = found
        match.finish()
        recorded = match.digests
        stored = match.storedAt
        if !match.untagged.isEmpty {
            try index.transaction { () throws(SyncError) in
                for (name, tag) in match.untagged { try index.setTag(tag, named: name) }
            }
        }
        storedInFeed = match.storedCount
        keep(match.result)
        return match.result
    }

    /// Keeps `storedInFeed` true as rows come and go; a write that was rolled back makes it count again.
    private func rowChanged(_ change: AssetIndex.RowChange) {
        switch change {
        case .added(let url, let name, let fingerprint, let tag):
            guard let position = feedKey(url, name: name)?.position else {
                rowsChangedOutsideFeed += 1
                return
            }
            storedInFeed += 1
            if position < stored.count { stored[position] = true }
            record(fingerprint, at: position)
            tagWritten(tag, at: position)
        case .updated(let url, let name, let fingerprint, let tag):
            guard let position = feedKey(url, name: name)?.position else { return }
            record(fingerprint, at: position)
            if case .written(let tag) = tag { tagWritten(tag, at: position) }
        case .removed(let url, let name):
            guard let position = feedKey(url, name: name)?.position else {
                rowsChangedOutsideFeed += 1
                return
            }
            storedInFeed -= 1
            if position < stored.count { stored[position] = false }
            record(nil, at: position)
        case .unknown:
            sweep = nil
            recorded = []
            stored = []
            storedInFeed = (try? recount()) ?? storedInFeed  // the next sweep counts again in any case
        }
    }

    /// A row of the key at `position` took `tag`. A file is stored with the tag its access found in the feed, so a
    /// tag other than the kept feed's (the feed changed while the file was being fetched) is a stale row the sweep
    /// has not seen: the sweep is dropped, and the next question walks the index. Every other row's tag is then the
    /// kept feed's or was found stale by a sweep, which is what `current()` and `carriedOver(to:)` build on.
    private func tagWritten(_ tag: String?, at position: Int) {
        guard position < feed.count, let feedTag = feed.tags[position], tag.map(FeedTag.init) != feedTag else { return }
        sweep = nil
    }

    /// Before the first walk of a feed the table is empty: a fingerprint is then looked up, not recorded here.
    private func record(_ fingerprint: FileFingerprint?, at position: Int) {
        if position < recorded.count {
            recorded[position] = fingerprint.map { FingerprintDigest($0).value } ?? FingerprintDigest.none
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
    /// finds for it: the same url, at the key's file name), and its position.
    func feedKey(_ url: String, name: String) -> (key: AssetKey, position: Int)? {
        Self.feedKey(url, name: name, in: feed)
    }

    private static func feedKey(_ url: String, name: String, in feed: FeedState) -> (key: AssetKey, position: Int)? {
        var url = url, name = name
        return url.withUTF8 { url in name.withUTF8 { name in feed.member(url: url, fileName: name) } }
    }
}
