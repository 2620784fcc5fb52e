import EmojiArtGallery
@testable import EmojiArtSync
import TestSupport
import Testing

/// What a reload (`SIGHUP`, `systemctl reload`) does, as the man page says: a full pass of its own, failed
/// transfers retried now, answers that were no image at all left on record.
@Suite(.timeLimit(.minutes(2)))
struct ReloadTests {
    /// A reload asked for while a full pass runs gets a full pass of its own. The pass already running read the
    /// feed before the request, so it cannot carry it out; before the fix its end cleared the request, and the
    /// next pass only asked the gallery "changed since?" and walked nothing.
    ///
    /// Ordered by events: the first pass is held at its first batch until the reload has been asked for.
    @Test func aReloadAskedForDuringAFullPassGetsAFullPassOfItsOwn() async throws {
        let gallery = try await GalleryFixture(count: 12, imageSize: .small)
        let dir = TemporaryDirectory("reload-during-pass")
        let hooks = AgentTestHooks()
        let fullPassesBegun = Shared(0)
        let reloadAsked = Shared(false)
        hooks.setBeforePassBatch { batch in
            guard batch == 0 else { return }
            // The first full pass waits here until the reload below has been asked for.
            if fullPassesBegun.increment() == 1 {
                _ = await eventually(timeout: .seconds(60)) { reloadAsked.value }
            }
        }
        var configuration = try gallery.configuration(dir: dir.path)
        configuration.schedule.pollInterval = .seconds(3600)
        configuration.testHooks = hooks
        let agent = try await RunningAgent(configuration)

        #expect(await eventually(timeout: .seconds(60)) { fullPassesBegun.value == 1 }, "the first pass never began")
        let pass = await agent.keeper.reload()
        reloadAsked.set(true)
        await agent.keeper.waitForPass(pass)
        let begun = fullPassesBegun.value
        #expect(await agent.stop() == .success)
        await gallery.stop()

        #expect(begun == 2, "the reload's pass was not a full pass (full passes begun: \(begun))")
        for n in gallery.validNumbers { #expect(gallery.isMirrored(n, in: dir)) }
    }

    /// Before: a reload forgot every failure, the gallery's error items' answers on record included, so each
    /// `SIGHUP` (logrotate's daily one too) asked again for every item that had answered with no image: 10,000
    /// requests and about 7 s of CPU for a gallery of 100,000.
    @Test func aReloadRetriesAFailedTransferButNotAnAnswerThatWasNoImage() async throws {
        // Item 10 answers 200 with a JSON error (no image); item 3 answers 500 until the fault is lifted.
        let gallery = try await GalleryFixture(
            count: 10, faults: GalleryFaults(imageFaults: [3: .serverError]), imageSize: .small)
        let dir = TemporaryDirectory("reload-retries")
        let agent = try await RunningAgent(try gallery.configuration(dir: dir.path))
        func passLines() -> [String] { logLines(dir.path).filter { $0.contains("event=pass") } }
        #expect(await eventually(timeout: .seconds(60)) { passLines().count == 1 }, "the first pass never ended")
        let errorItemAsked = gallery.server.requestCount(path: "/gallery/image?10")
        #expect(errorItemAsked >= 1)
        gallery.server.setFaults(.none)

        let pass = await agent.keeper.reload()
        await agent.keeper.waitForPass(pass)
        let errorItemAskedAfter = gallery.server.requestCount(path: "/gallery/image?10")
        #expect(await eventually(timeout: .seconds(60)) { gallery.isMirrored(3, in: dir) }, "the failed transfer was not retried")
        #expect(await agent.stop() == .success)
        await gallery.stop()

        #expect(errorItemAskedAfter == errorItemAsked, "the reload asked again for an answer on record that was no image")
    }

    /// A reload asks for the feed conditionally: the gallery's `304` carries the full pass over the feed kept (no
    /// 36 MB body sent again at 100,000 items). A body byte-identical to the last one decoded (a new `ETag`, the same
    /// bytes) is not decoded again, and the full pass over it still runs. A changed body is decoded.
    /// Before, a reload asked unconditionally and the gallery sent the whole feed every time.
    @Test func aReloadOfAByteIdenticalFeedSkipsTheDecodeButNotThePass() async throws {
        // A feed in one order at every request, as a static export serves it (the gallery shuffles it otherwise).
        let gallery = try await GalleryFixture(count: 20, faults: GalleryFaults(unshuffledFeed: true), imageSize: .small)
        let dir = TemporaryDirectory("reload-same-body")
        let agent = try await RunningAgent(try gallery.configuration(dir: dir.path))
        func lines(_ what: String) -> [String] { logLines(dir.path).filter { $0.contains(what) } }
        #expect(await eventually(timeout: .seconds(60)) { lines("event=poll").count == 1 }, "the first poll never ended")
        #expect(lines("event=poll").last?.contains("body=decoded") == true)

        let unchanged = await agent.keeper.reload()
        await agent.keeper.waitForPass(unchanged)
        #expect(await eventually { lines("event=poll").count == 2 })
        #expect(lines("event=poll").last?.contains("body=not_modified") == true, "\(lines("event=poll"))")
        #expect(lines("event=pass").count == 2, "the reload's full pass did not run")

        // A plan change that leaves the feed's bytes alone (a slow error item) gives the feed a new `ETag`.
        gallery.server.setFaults(GalleryFaults(imageFaults: [10: .slow(milliseconds: 1)], unshuffledFeed: true))
        let same = await agent.keeper.reload()
        await agent.keeper.waitForPass(same)
        #expect(await eventually { lines("event=poll").count == 3 })
        #expect(lines("event=poll").last?.contains("body=unchanged") == true, "\(lines("event=poll"))")
        #expect(lines("event=pass").count == 3, "the reload's full pass did not run")

        gallery.server.setFaults(GalleryFaults(droppedItems: [3], unshuffledFeed: true))
        let changed = await agent.keeper.reload()
        await agent.keeper.waitForPass(changed)
        #expect(await eventually { lines("event=poll").count == 4 })
        let last = lines("event=poll").last ?? ""
        #expect(last.contains("body=decoded") && last.contains("unique=19"), "\(last)")
        #expect(await agent.stop() == .success)
        await gallery.stop()
    }

    /// A feed that changed near one end is decoded as its difference from the last body (`FeedDifference`): the
    /// poll says `body=difference`, and the feed it makes is the one the gallery sent (its listings, refusals and
    /// keys). A change spread over the body is read whole (`body=decoded`).
    @Test func aReloadOfAFeedChangedAtItsEndReadsOnlyTheDifference() async throws {
        // 1,000 items listed three times in one order: a 350 KB body, above the size a difference is tried from.
        let gallery = try await GalleryFixture(count: 1_000, faults: GalleryFaults(unshuffledFeed: true), imageSize: .small)
        let dir = TemporaryDirectory("reload-difference")
        let agent = try await RunningAgent(try gallery.configuration(dir: dir.path))
        func lines(_ what: String) -> [String] { logLines(dir.path).filter { $0.contains(what) } }
        func reload(to faults: GalleryFaults, polls: Int) async -> String {
            gallery.server.setFaults(faults)
            await agent.keeper.waitForPass(await agent.keeper.reload())
            _ = await eventually { lines("event=poll").count == polls }
            return lines("event=poll").last ?? ""
        }
        #expect(await eventually(timeout: .seconds(60)) { lines("event=poll").count == 1 }, "the first poll never ended")
        #expect(lines("event=poll").last?.contains("body=decoded") == true)

        // A new `ETag` on the same bytes: compared with the body kept (not hashed), found the same, not decoded.
        let same = await reload(to: GalleryFaults(imageFaults: [10: .slow(milliseconds: 1)], unshuffledFeed: true), polls: 2)
        #expect(same.contains("body=unchanged"), "\(same)")

        // Two items appended: another listing of item 7, and a url the agent refuses.
        let appended = await reload(
            to: GalleryFaults(extraFeedURLs: ["/gallery/image?7", "/gallery/../secret"], unshuffledFeed: true), polls: 3)
        #expect(appended.contains("body=difference") && appended.contains("entries=3001") && appended.contains("unique=1000"), "\(appended)")
        #expect(lines("event=reject").contains { $0.contains("/gallery/../secret") }, "the appended item was not refused")

        let removed = await reload(to: GalleryFaults(unshuffledFeed: true), polls: 4)
        #expect(removed.contains("body=difference") && removed.contains("entries=3000"), "\(removed)")

        // Item 1,000 dropped: its three listings end each third of the body, a change spread over it.
        let dropped = await reload(to: GalleryFaults(droppedItems: [1_000], unshuffledFeed: true), polls: 5)
        #expect(dropped.contains("body=decoded") && dropped.contains("unique=999"), "\(dropped)")
        #expect(await agent.stop() == .success)
        await gallery.stop()
        for n in 1...999 where gallery.validNumbers.contains(n) { #expect(gallery.isMirrored(n, in: dir)) }
    }
}
