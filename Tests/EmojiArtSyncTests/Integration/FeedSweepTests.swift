import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import Logging
import TestSupport
import Testing

/// A changed feed costs what changed: a feed that comes back with the same items keeps what was worked out from
/// the last one (`setFeed` does nothing, the sweeps answer from what they found), yet a row that changed since
/// is seen, and a feed that drops an item still removes its file.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct FeedSweepTests {
    @Test func theSameItemsKeepTheirSweepsAndWhatChangedSinceIsSeen() async throws {
        try await Self.afterOneSync("feed-sweeps") { core, gallery, dir in
            try await Self.sweep(core, dir: dir, valid: gallery.validNumbers, failing: gallery.errorNumbers)
        }
    }

    /// `--once` reads the index's rows off the silo while the feed decodes (`IndexRowSnapshot`) and the catalogue
    /// matches them off the silo: it must find what its own walk finds, and must not take rows read before a write
    /// of the index (they would call a removed file stored).
    @Test func rowsReadOffTheSiloGiveWhatTheWalkGivesAndAreRefusedAfterAWrite() async throws {
        try await Self.afterOneSync("feed-sweep-rows") { core, gallery, _ in
            try await Self.matchRows(core, valid: gallery.validNumbers, failing: gallery.errorNumbers)
        }
    }

    /// A new feed's tables carried over from the feed kept, with no walk of the index, are what a walk finds: a
    /// tag changed, keys reordered and dropped, dropped keys back (their rows among the gone ones) with a new key,
    /// a tag removed and one changed back.
    @Test func aFeedCarriedOverFromTheOneKeptIsWhatAWalkFinds() async throws {
        try await Self.afterOneSync("feed-carried", count: 30) { core, _, _ in try await Self.carryOver(core) }
    }

    /// A file stored under the tag its fetch found, when the feed changed meanwhile, has a row with another tag
    /// than the kept feed's: the sweep sees it stale (it was answered from before, with no stale key), and so
    /// does the next feed carried over from this one.
    @Test func aRowStoredWithAnotherTagThanTheFeedsIsFoundStale() async throws {
        try await Self.afterOneSync("feed-retagged") { core, _, _ in try await Self.retag(core) }
    }

    /// More rows came and went since the last sweep than the index's change log keeps (a cold pass adds tens of
    /// thousands): the catalogue answers from its table of stored keys, with no walk of the index, what a walk
    /// finds (unstored keys come and go, a stale key stays stale until its row takes the feed's tag); once a row of
    /// no feed key goes (a gone row), only a walk can tell, and it walks.
    @Test func moreRowChangesThanTheLogKeepsAreAnsweredFromTheTableWithoutAWalk() async throws {
        try await Self.afterOneSync("feed-sweep-overflow", count: 20) { core, gallery, _ in
            try await Self.overflow(core, valid: gallery.validNumbers, failing: gallery.errorNumbers)
        }
    }

    /// A cold pass stores more files than the change log keeps: what it asks after its fetches (stale keys, keys
    /// still unstored) costs no walk of the index beyond what the pass's start cost.
    @Test @SyncActor func aColdPassAsksWhatIsLeftUnstoredWithoutWalkingTheIndex() async throws {
        let gallery = try await GalleryFixture(count: 30)
        let dir = TemporaryDirectory("feed-sweep-cold")
        let agent = try await SyncAgent(configuration: gallery.configuration(dir: dir.path))
        let core = agent.core
        core.index.changeLogLimit = 2
        #expect(core.catalogue.walks == 0)
        let report = try await agent.syncOnce()
        #expect(report.available == gallery.validNumbers.count)
        #expect(core.catalogue.walks == 0, "the index was walked")
        #expect(try core.catalogue.current().unstored == (try gallery.errorNumbers.map { try AssetKey(feedURL: "/gallery/image?\($0)") }).sorted())
        agent.shutdown()
        await gallery.stop()
    }

    /// Runs `check` with the core of an agent that synced a gallery of `count` items once into a fresh DIR (and
    /// the gallery and DIR's path), then stops both.
    private static func afterOneSync(
        _ label: String, count: Int = 12, _ check: (MirrorCore, GalleryFixture, String) async throws -> Void
    ) async throws {
        let gallery = try await GalleryFixture(count: count)
        let dir = TemporaryDirectory(label)
        let agent = try await SyncAgent(configuration: gallery.configuration(dir: dir.path))
        _ = try await agent.syncOnce()
        try await check(agent.core, gallery, dir.path)
        agent.shutdown()
        await gallery.stop()
    }

    @SyncActor
    private static func overflow(_ core: MirrorCore, valid: [Int], failing: [Int]) async throws {
        func key(_ n: Int) throws -> AssetKey { try AssetKey(feedURL: "/gallery/image?\(n)") }
        let catalogue = core.catalogue
        try #require(valid.count >= 8 && !failing.isEmpty)
        func state() throws -> [String] {
            let sweep = try catalogue.current()
            return ["stored \(catalogue.storedInFeed)", "unstored \(sweep.unstored)", "stale \(sweep.stale)", "gone \(sweep.gone)"]
                + catalogue.keys.map { "\($0) \(String(describing: catalogue.isStored($0)))" }
        }
        /// `state()` with no walk of the index, then what a walk finds: the same.
        func checkWithoutWalk(_ what: String) throws {
            let walks = catalogue.walks
            let fromTables = try state()
            #expect(catalogue.walks == walks, "\(what): the index was walked")
            _ = try catalogue.sweepIndex()
            #expect(try state() == fromTables, "\(what)")
        }
        // A stale key (its row took another tag: the sweep is dropped and the next question walks).
        let stale = try key(valid[0])
        let feedTag = try #require(catalogue[tag: stale])
        var entry = try #require(try core.index.entry(for: stale))
        entry.tag = "the-tag-of-an-older-feed"
        _ = try core.index.transaction { () throws(SyncError) in try core.index.put(entry) }
        #expect(try catalogue.current().stale == [stale])

        core.index.changeLogLimit = 2
        // Five rows of feed keys come and go, more than the log keeps: three files removed, two of them back.
        let (removed, back) = (try valid[1...3].map(key), try valid[1...2].map(key))
        for key in removed { #expect(try await core.owned.remove(key) > 0) }
        for key in back { _ = try await core.pipeline.refetch(key) }
        try #require(core.index.rowsChanged(since: core.index.rowChanges - 5) == nil, "the change log did not overflow")
        try checkWithoutWalk("rows of feed keys removed and added")
        #expect(try catalogue.current().unstored == (try (failing + [valid[3]]).map(key)).sorted())
        #expect(try catalogue.current().stale == [stale])

        // The stale row takes the feed's tag (written as an adoption writes it: no row comes or goes), then more
        // rows come and go: no longer stale.
        try core.index.setTag(feedTag, named: stale.fileName)
        for key in back { #expect(try await core.owned.remove(key) > 0) }
        for key in try [valid[1], valid[2], valid[3]].map(key) { _ = try await core.pipeline.refetch(key) }
        try checkWithoutWalk("a stale row retagged")
        #expect(try catalogue.current().stale.isEmpty)
        #expect(try catalogue.current().unstored == (try failing.map(key)).sorted())

        // A gone row (its key dropped from the feed), then removed with more rows of feed keys: only a walk finds
        // that the gone row went, and the catalogue walks.
        let dropped = try key(valid[4])
        var tags: [AssetKey: String] = [:]
        for key in catalogue.keys { tags[key] = catalogue[tag: key] }
        #expect(try catalogue.replace(catalogue.keys.filter { $0 != dropped }, tags: tags))
        #expect(try catalogue.current().gone == [dropped])
        #expect(try await core.owned.remove(dropped) > 0)
        for key in try valid[5...7].map(key) {
            #expect(try await core.owned.remove(key) > 0)
            _ = try await core.pipeline.refetch(key)
        }
        let walks = catalogue.walks
        #expect(try catalogue.current().gone.isEmpty)
        #expect(catalogue.walks == walks + 1, "a row of no feed key went: the catalogue must walk")
    }

    @SyncActor
    private static func retag(_ core: MirrorCore) throws {
        let catalogue = core.catalogue
        let keys = catalogue.keys
        let key = try #require(keys.first { catalogue.isStored($0) == true })
        #expect(try catalogue.current().stale.isEmpty)
        var entry = try #require(try core.index.entry(for: key))
        entry.tag = "the-tag-of-an-older-feed"
        _ = try core.index.transaction { () throws(SyncError) in try core.index.put(entry) }
        #expect(try catalogue.current().stale == [key])
        var tags: [AssetKey: String] = [:]
        for other in keys where other != key { tags[other] = "a-new-tag" }
        tags[key] = catalogue[tag: key]
        #expect(try catalogue.replace(keys, tags: tags))
        #expect(try catalogue.current().stale.contains(key))
    }

    @SyncActor
    private static func carryOver(_ core: MirrorCore) throws {
        let catalogue = core.catalogue
        let keys = catalogue.keys
        var tags: [AssetKey: String] = [:]
        for key in keys { tags[key] = catalogue[tag: key] }
        _ = try catalogue.current()
        func state() throws -> [String] {
            let sweep = try catalogue.current()
            return ["stored \(catalogue.storedInFeed)", "unstored \(sweep.unstored)", "stale \(sweep.stale)", "gone \(sweep.gone)"]
                + catalogue.keys.map { key in
                    "\(key) \(String(describing: catalogue.isStored(key))) \(String(describing: catalogue.recordedDigest(of: key)?.value))"
                }
        }
        func check(_ items: [AssetKey], _ itemTags: [AssetKey: String], _ what: String) throws {
            let walks = catalogue.walks
            #expect(try catalogue.replace(items, tags: itemTags), "\(what)")
            #expect(catalogue.walks == walks, "\(what): the index was walked")
            let carried = try state()
            _ = try catalogue.sweepIndex()
            #expect(try state() == carried, "\(what)")
        }
        let dropped = Array(keys.suffix(3))
        var changed = tags
        changed[keys[0]] = "another-tag"
        try check(keys, changed, "one tag changed")
        try check(keys.reversed().filter { !dropped.contains($0) }, changed, "reordered, three dropped")
        try check(keys + [try AssetKey(feedURL: "/gallery/image?999")], changed, "the three back, one new key")
        changed[keys[1]] = nil
        changed[keys[0]] = tags[keys[0]]
        try check(keys, changed, "a tag removed, one changed back")
        #expect(try catalogue.current().stale.isEmpty)
    }

    @SyncActor
    private static func matchRows(_ core: MirrorCore, valid: [Int], failing: [Int]) async throws {
        func key(_ n: Int) throws -> AssetKey { try AssetKey(feedURL: "/gallery/image?\(n)") }
        func rows() async throws -> IndexRowSnapshot {
            let source = try #require(core.index.snapshotSource())
            return try await BlockingIO.run { () throws(SyncError) in
                try IndexRowSnapshot.read(path: source.path, changesBefore: source.changesBefore)
            }
        }
        let catalogue = core.catalogue
        let keys = catalogue.keys
        var tags: [AssetKey: String] = [:]
        for key in keys { tags[key] = catalogue[tag: key] }
        try #require(valid.count >= 3 && !failing.isEmpty)
        let (refreshed, removed) = (try key(valid[0]), try key(valid[1]))

        // A new feed (one tag changed), matched with rows read off the silo: what the walk would find.
        var changed = tags
        changed[refreshed] = "another-tag"
        let snapshot = try await rows()
        #expect(snapshot.count == valid.count)
        #expect(try await catalogue.replace(FeedState(keys: keys, tags: changed), matching: snapshot))
        #expect(try catalogue.current().stale == [refreshed])
        #expect(try catalogue.current().unstored == (try failing.map(key)).sorted())
        #expect(try catalogue.current().gone.isEmpty)
        #expect(catalogue.storedInFeed == valid.count)
        #expect(try valid.map(key).allSatisfy { catalogue.isStored($0) == true && catalogue.recordedDigest(of: $0) != nil })
        #expect(try failing.map(key).allSatisfy { catalogue.isStored($0) == false })

        // The rows are matched in two halves at once: a key refreshed in the first half (the first row read), a
        // key dropped from the feed in the second (the last row), and the counts of both, come together.
        let halves = try await rows()
        var urls: [String] = []
        halves.forEach { urls.append(String(decoding: $0.url, as: UTF8.self)) }
        let (first, dropped) = (try AssetKey(feedURL: urls[0]), try AssetKey(feedURL: urls[urls.count - 1]))
        changed[first] = "yet-another-tag"
        #expect(try await catalogue.replace(FeedState(keys: keys.filter { $0 != dropped }, tags: changed), matching: halves))
        #expect(Set(try catalogue.current().stale) == Set([refreshed, first]).subtracting([dropped]))
        #expect(try catalogue.current().gone == [dropped])
        #expect(catalogue.storedInFeed == valid.count - 1)
        #expect(keys.filter { $0 != dropped && catalogue.isStored($0) == true && catalogue.recordedDigest(of: $0) != nil }.count == valid.count - 1)
        changed[first] = tags[first]
        #expect(try await catalogue.replace(FeedState(keys: keys, tags: changed), matching: try await rows()))
        #expect(catalogue.storedInFeed == valid.count)

        // Rows read, then a file removed (its row goes), then a new feed: the rows are stale and not taken.
        let before = try await rows()
        #expect(try await core.owned.remove(removed) > 0)
        changed[refreshed] = "a-third-tag"
        #expect(try await catalogue.replace(FeedState(keys: keys, tags: changed), matching: before))
        #expect(try catalogue.current().unstored == (try failing.map(key) + [removed]).sorted())
        #expect(catalogue.isStored(removed) == false)
        #expect(catalogue.storedInFeed == valid.count - 1)
    }

    @SyncActor
    private static func sweep(_ core: MirrorCore, dir: String, valid: [Int], failing: [Int]) async throws {
        func key(_ n: Int) throws -> AssetKey { try AssetKey(feedURL: "/gallery/image?\(n)") }
        let catalogue = core.catalogue
        let keys = catalogue.keys
        var tags: [AssetKey: String] = [:]
        for key in keys { tags[key] = catalogue[tag: key] }
        try #require(valid.count >= 3 && !failing.isEmpty && tags.count == keys.count)
        let (removedRow, refreshed, dropped) = (try key(valid[0]), try key(valid[1]), try key(valid[2]))

        // The same items again (what a new ETag on the same bytes brings): nothing to work out.
        #expect(try catalogue.replace(keys, tags: tags) == false)
        #expect(Set(try catalogue.current().unstored) == Set(try failing.map(key)))
        // A row goes (its file removed): the same feed's sweep sees it, not what it found before.
        #expect(try await core.owned.remove(removedRow) > 0)
        #expect(Set(try catalogue.current().unstored) == Set(try failing.map(key)).union([removedRow]))
        #expect(catalogue.storedInFeed == valid.count - 1)
        // Which keys are stored is known without asking the index (what `status` counts failing keys with).
        #expect(catalogue.isStored(removedRow) == false)
        #expect(try failing.map(key).allSatisfy { catalogue.isStored($0) == false })
        #expect(try valid.dropFirst().map(key).allSatisfy { catalogue.isStored($0) == true })
        // It comes back (a repair stores it): the same sweep sees that too.
        _ = try await core.pipeline.refetch(removedRow)
        #expect(Set(try catalogue.current().unstored) == Set(try failing.map(key)))
        #expect(catalogue.storedInFeed == valid.count)
        #expect(catalogue.isStored(removedRow) == true)
        #expect(try catalogue.current().unstored == (try failing.map(key)).sorted())

        // One tag changes: that key is stale, and stays stale for the same feed until its row takes the new tag.
        var changed = tags
        changed[refreshed] = "another-tag"
        #expect(try catalogue.replace(keys, tags: changed))
        #expect(try catalogue.current().stale == [refreshed])
        #expect(try catalogue.replace(keys, tags: changed) == false)
        #expect(try catalogue.current().stale == [refreshed])
        try core.index.setTag("another-tag", named: refreshed.fileName)
        #expect(try catalogue.current().stale.isEmpty)

        // An item leaves the feed: its file is removed; every row left is the feed's, so the next run looks at nothing.
        changed[dropped] = nil
        #expect(try catalogue.replace(keys.filter { $0 != dropped }, tags: changed))
        let removal = GoneItemRemoval(owned: core.owned, maxDeletePercent: 100, logger: Logger(label: "test"))
        #expect(try catalogue.current().gone == [dropped])
        #expect(await removal.run(removal.plan(gone: try catalogue.current().gone, feedIsEmpty: false)).removed == 1)
        #expect(!FileManager.default.fileExists(atPath: dir + "/" + dropped.fileName))
        #expect(core.owned.count == catalogue.storedInFeed)
        #expect(try catalogue.current().gone.isEmpty, "every row left is the feed's")
    }
}

/// A rescan compares each owned file's `lstat` with its row a page at a time and checks only the files that
/// differ: a deleted file and one rewritten in place with the same size are both repaired, the others are not read.
@Suite(.timeLimit(.minutes(2)))
struct RescanTests {
    @Test func aRescanRepairsWhatChangedUnwatchedAndReadsNothingElse() async throws {
        let (gallery, dir, agent, keeper) = try await Self.syncedWithoutWatcher("rescan-pages")
        // No watcher runs: one file deleted, one rewritten in place (same size, one byte flipped).
        let deleted = dir.file("gallery_image_3.png")
        let rewritten = dir.file("gallery_image_4.png")
        unlink(deleted)
        var bytes = try #require(readBytes(rewritten))
        bytes[bytes.count / 2] ^= 0xFF
        try writeBytes(bytes, to: rewritten)
        let readBefore = await agent.core.log.filesRead

        await keeper.repairs.rescanAll()
        await keeper.repairs.checkPending()
        #expect(readBytes(deleted) == gallery.server.imageBytes(3), "the deleted file was not repaired")
        #expect(readBytes(rewritten) == gallery.server.imageBytes(4), "the rewritten file was not repaired")
        #expect(await agent.core.log.filesRead - readBefore == 1, "only the file whose lstat changed is read")
        #expect(await !keeper.repairs.hasPendingChecks)
        agent.shutdown()
        await gallery.stop()
    }

    /// The rescan goes through the feed's keys by the digests the catalogue keeps, then through the rows of keys
    /// the feed no longer lists: a file of such a row rewritten unwatched is looked at too, and only it is read.
    @Test func aRescanAlsoLooksAtTheFilesOfItemsGoneFromTheFeed() async throws {
        let (gallery, dir, agent, keeper) = try await Self.syncedWithoutWatcher("rescan-gone")
        let gone = try AssetKey(feedURL: "/gallery/image?5")
        let rewritten = dir.file(gone.fileName)
        // The feed drops item 5 (its file stays: no removal runs here), then the file is rewritten in place.
        try await Self.drop(gone, from: agent.core.catalogue)
        var bytes = try #require(readBytes(rewritten))
        bytes[bytes.count / 2] ^= 0xFF
        try writeBytes(bytes, to: rewritten)
        let readBefore = await agent.core.log.filesRead

        await keeper.repairs.rescanAll()
        await keeper.repairs.checkPending()
        #expect(await agent.core.log.filesRead - readBefore == 1, "the gone item's changed file was looked at, and only it")
        #expect(await !keeper.repairs.hasPendingChecks)
        agent.shutdown()
        await gallery.stop()
    }

    /// A gallery of 40 small images synced once into a new directory, and a keeper over it with no watcher and
    /// no poll due: only what a test asks for runs.
    private static func syncedWithoutWatcher(
        _ name: String
    ) async throws -> (GalleryFixture, TemporaryDirectory, SyncAgent, MirrorKeeper) {
        let gallery = try await GalleryFixture(count: 40, imageSize: .small)
        let dir = TemporaryDirectory(name)
        var configuration = try gallery.configuration(dir: dir.path)
        configuration.schedule.pollInterval = .seconds(3600)
        let agent = try await SyncAgent(configuration: configuration)
        _ = try await agent.syncOnce()
        let keeper = await MirrorKeeper(
            core: agent.core, fetcher: agent.fetcher, configuration: configuration, logger: agent.logger)
        return (gallery, dir, agent, keeper)
    }

    @SyncActor
    private static func drop(_ gone: AssetKey, from catalogue: FeedCatalogue) throws {
        var tags: [AssetKey: String] = [:]
        for key in catalogue.keys { tags[key] = catalogue[tag: key] }
        tags[gone] = nil
        #expect(try catalogue.replace(catalogue.keys.filter { $0 != gone }, tags: tags))
        #expect(try catalogue.current().gone == [gone])
    }
}
