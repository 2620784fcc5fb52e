import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The warm path: the catalogue's walk of the index keeps each stored file's recorded fingerprint, a batch's files
/// are looked at (`fstatat`) off the silo, and a file whose fingerprint is still the recorded one is a disk hit
/// without a lookup in the index. docs/ARCHITECTURE.md, "A disk hit".
@Suite(.serialized, .timeLimit(.minutes(2)))
struct WarmPathTests {
    /// A warm pass looks up only what the tables cannot answer: the error items, whose answers with no image are
    /// on record in the index, read from that table alone (they have no row, as the catalogue knows). Every stored
    /// file is trusted from the table of fingerprints. Before, each error item took the lookup of both tables.
    @Test func aWarmPassLooksUpNoStoredFileInTheIndex() async throws {
        let gallery = try await GalleryFixture(count: 30, imageSize: .small)
        let dir = TemporaryDirectory("warm-lookups")
        _ = try await gallery.syncOnce(dir: dir.path)
        let agent = try await SyncAgent(configuration: gallery.configuration(dir: dir.path))
        let index = agent.core.index
        let (rowsBefore, unusableBefore) = await (index.rowQueriesRun, index.unusableReadsRun)
        let warm = try await agent.syncOnce()
        let (rows, unusable) = await (index.rowQueriesRun - rowsBefore, index.unusableReadsRun - unusableBefore)
        agent.shutdown()
        await gallery.stop()
        #expect(warm.hits[.disk] == gallery.validNumbers.count)
        #expect(rows == 0, "\(rows) row queries for \(gallery.validNumbers.count) stored files")
        #expect(unusable == gallery.errorNumbers.count, "\(unusable) reads for \(gallery.errorNumbers.count) error items")
        #expect(warm.failures.count == gallery.errorNumbers.count, "each error item refused from the record")
        for number in gallery.errorNumbers {
            #expect(gallery.server.requestCount(path: "/gallery/image?\(number)") == 1, "item \(number) asked again")
        }
    }

    /// A cold pass asks the index for no key's row: the catalogue knows no key of the feed has one, and no answer
    /// that was no image is on record for any (`UnusableAnswerTable`'s filter); the committer asks for none either.
    /// Its refusals are written with its files' rows, not a commit each, and are on record all the same: the next
    /// run asks nothing for them. Before, each miss ran a lookup, each file a query before its rename, and each
    /// refusal a commit of its own (740 queries, 201 commits for 180 batches).
    @Test func aColdPassLooksNothingUpAndWritesItsRefusalsWithItsFiles() async throws {
        let gallery = try await GalleryFixture(count: 200, imageSize: .small)
        let dir = TemporaryDirectory("cold-lookups")
        let agent = try await SyncAgent(configuration: gallery.configuration(dir: dir.path))
        let index = agent.core.index
        let (queriesBefore, commitsBefore) = await (index.rowQueriesRun, index.commits)
        let cold = try await agent.syncOnce()
        let (queries, commits) = await (index.rowQueriesRun - queriesBefore, index.commits - commitsBefore)
        let batches = await agent.core.committer.batches
        agent.shutdown()
        #expect(cold.available == gallery.validNumbers.count)
        // What is left is the catalogue's catching up after the pass (`FeedCatalogue.current()`: the row and the
        // tag of each row changed since its walk, two queries per file stored); none during the pass.
        #expect(queries <= 2 * gallery.validNumbers.count, "\(queries) row queries in a cold pass")
        // A commit per batch of files, and one at the end (the checkpoint writes what is still waiting).
        #expect(commits <= batches + 2, "\(commits) commits for \(batches) batches and \(gallery.errorNumbers.count) refusals")

        let warm = try await gallery.syncOnce(dir: dir.path)
        #expect(warm.hits[.disk] == gallery.validNumbers.count)
        for number in gallery.errorNumbers {
            #expect(gallery.server.requestCount(path: "/gallery/image?\(number)") == 1, "item \(number) asked again")
        }
        await gallery.stop()
    }

    /// Damage that left the file's `lstat` alone (bit rot under an unchanged inode, caught by the scrub) drops the
    /// recorded fingerprint in the index, and with it the table's: the next pass does not trust the file, reads it,
    /// and repairs it.
    @Test func damageTheScrubFindsIsNotTrustedFromTheTable() async throws {
        let gallery = try await GalleryFixture(count: 6, imageSize: .small)
        let dir = TemporaryDirectory("warm-rot")
        let agent = try await SyncAgent(configuration: gallery.configuration(dir: dir.path))
        defer { agent.shutdown() }
        _ = try await agent.syncOnce()
        let path = dir.file("gallery_image_2.png")
        try await Self.rotAndTrust(path, core: agent.core)
        #expect(try await agent.core.inspector.scrub(fileNamed: "gallery_image_2.png") == .damaged(.corrupt))
        let key = try AssetKey(feedURL: "/gallery/image?2")
        await agent.core.memory.purge()
        let pass = await agent.core.pipeline.beginPass()
        let (keys, version, position) = try await Self.feed(of: agent.core, key: key)
        let listings = AccessPipeline.Listings(keys: keys, feedVersion: version, pass: pass)
        let answer = await agent.core.pipeline.answer([position], of: listings)
        #expect(answer.answered.isEmpty, "a file the scrub found damaged was trusted: \(answer.answered)")
        for miss in answer.loads { _ = await agent.core.pipeline.load(miss) }
        #expect(readBytes(path) == gallery.server.imageBytes(2), "the damaged file was not repaired")
        await gallery.stop()
    }

    /// A repeat listing in a pass is answered from the pass's own table of what it answered from memory
    /// (`PassAnswers`) only while the cache has dropped and replaced nothing: after the key was dropped it is a
    /// disk hit again, and after its record was replaced it is answered with the new record's size. Fails if the
    /// table answers regardless of the cache (the third and fourth answers below were then memory hits with the
    /// size first noted).
    @Test func aRepeatListingIsAnsweredFromThePassOnlyWhileTheCacheStillHoldsTheKey() async throws {
        let gallery = try await GalleryFixture(count: 6, imageSize: .small)
        let dir = TemporaryDirectory("warm-repeats")
        let agent = try await SyncAgent(configuration: gallery.configuration(dir: dir.path))
        defer { agent.shutdown() }
        _ = try await agent.syncOnce()
        let key = try AssetKey(feedURL: "/gallery/image?2")
        let size = try #require(readBytes(dir.file("gallery_image_2.png"))).count
        let core = agent.core
        _ = await core.memory.purge()
        await core.log.beginPass()
        let pass = await core.pipeline.beginPass()
        let (keys, version, position) = try await Self.feed(of: core, key: key)
        let listings = AccessPipeline.Listings(keys: keys, feedVersion: version, pass: pass)
        func hit() async -> (Hit, Int)? {
            let answer = await core.pipeline.answer([position], of: listings)
            return answer.answered.first.map { ($0.hit, $0.bytes) }
        }
        let first = await hit(), repeated = await hit()
        #expect(first?.0 == .disk && first?.1 == size, "\(String(describing: first))")
        #expect(repeated?.0 == .memory && repeated?.1 == size, "\(String(describing: repeated))")

        _ = await core.memory.purge()  // as `SIGUSR2` does, between two listings of the pass
        let afterPurge = await hit()
        #expect(afterPurge?.0 == .disk, "a key no longer cached was a memory hit: \(String(describing: afterPurge))")

        await core.memory.remember(Asset(trustedOnDisk: key, size: size + 7))  // the record replaced
        let afterReplace = await hit()
        #expect(afterReplace?.0 == .memory && afterReplace?.1 == size + 7, "\(String(describing: afterReplace))")
        await core.log.endPass()
        await gallery.stop()
    }

    /// A failure on record refuses a key's repeat listings in a pass from the pass's table (`PassAnswers`) only
    /// while the failures on record are as they were and its retry time has not come: forgotten, or due, the next
    /// listing is answered from disk. Fails if the table refuses regardless (the third or the sixth answer below was
    /// then a refusal).
    @Test func aRepeatRefusalHoldsOnlyWhileTheFailureIsOnRecordAndNotDue() async throws {
        struct Refused: Error {}
        let gallery = try await GalleryFixture(count: 6, imageSize: .small)
        let dir = TemporaryDirectory("warm-refusals")
        var configuration = try gallery.configuration(dir: dir.path)
        configuration.http.retryPolicy = RetryPolicy(base: .seconds(1), cap: .seconds(1), jitter: 0)
        let agent = try await SyncAgent(configuration: configuration)
        defer { agent.shutdown() }
        _ = try await agent.syncOnce()
        let key = try AssetKey(feedURL: "/gallery/image?3")
        let core = agent.core
        _ = await core.memory.purge()
        await core.memory.recordFailure(Refused(), for: key)
        await core.log.beginPass()
        let pass = await core.pipeline.beginPass()
        let (keys, version, position) = try await Self.feed(of: core, key: key)
        let listings = AccessPipeline.Listings(keys: keys, feedVersion: version, pass: pass)
        func answer() async -> String {
            let answer = await core.pipeline.answer([position], of: listings)
            if !answer.refused.isEmpty { return "refused" }
            return answer.answered.first.map { "\($0.hit)" } ?? "miss"
        }
        #expect(await answer() == "refused")
        #expect(await answer() == "refused")
        await core.memory.forgetFailure(key)
        #expect(await answer() == "disk", "refused after the failure was forgotten")

        _ = await core.memory.purge()
        await core.memory.recordFailure(Refused(), for: key)
        #expect(await answer() == "refused")
        #expect(await answer() == "refused")
        let due = await eventually(timeout: .seconds(30)) { await core.memory.keysDueForRetry().contains(key) }
        #expect(due, "the failure never came due")
        #expect(await answer() == "disk", "refused after the failure's retry time had come")
        await core.log.endPass()
        await gallery.stop()
    }

    /// The catalogue's feed, its version and `key`'s position in it.
    @SyncActor
    private static func feed(of core: MirrorCore, key: AssetKey) throws -> ([AssetKey], UInt64, Int32) {
        let position = try #require(core.catalogue.position(of: key))
        return (core.catalogue.keys, core.catalogue.version, Int32(position))
    }

    /// Flips a byte in place, then makes the index record the file's new fingerprint and a new feed walk put it in
    /// the table: what a disk that rots a block under an unchanged inode leaves behind, seen by a later sweep.
    @SyncActor
    private static func rotAndTrust(_ path: String, core: MirrorCore) throws {
        var bytes = try #require(readBytes(path))
        bytes[bytes.count / 2] ^= 0x01
        let fd = open(path, O_WRONLY)
        _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        close(fd)
        let entry = try #require(try core.index.entry(named: (path as NSString).lastPathComponent))
        try core.index.setFingerprint(FileStatus.at(path)?.fingerprint, of: entry)
        let catalogue = core.catalogue
        var tags: [AssetKey: String] = [:]
        for key in catalogue.keys { tags[key] = (catalogue[tag: key] ?? "") + "-again" }
        #expect(try catalogue.replace(catalogue.keys, tags: tags))
        let key = try AssetKey(feedURL: "/gallery/image?2")
        #expect(try catalogue.recordedDigest(of: key) == FileStatus.at(path)?.fingerprint.map(FingerprintDigest.init))
    }
}
