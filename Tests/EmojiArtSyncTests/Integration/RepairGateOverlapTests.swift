import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A repair the watcher starts does not wait for DIR's deletions to pause before its check and fetch: those run
/// while the rename gate is shut, and only what `rm -rf DIR` could trip over waits for the gate (a new file in the
/// state directory's `tmp/`, the rename into DIR). The gate is held shut by the test, so what the repair does
/// meanwhile is seen without racing the gate's few milliseconds of quiet.
@Suite(.timeLimit(.minutes(3)))
struct RepairGateOverlapTests {
    /// Before, the watcher waited at the gate before it started any repair: no request reached the gallery while the
    /// gate was shut.
    @Test func aRepairFetchesWhileTheGateIsShutAndMakesItsFileOnlyOnceItOpens() async throws {
        let imageRequests = Shared<[String]>([])
        let gallery = try await GalleryFixture(count: 20, imageSize: .small) { record in
            if record.path.hasPrefix("/gallery/image?") { imageRequests.append(record.path) }
        }
        let dir = TemporaryDirectory("gate-overlap")
        let hooks = AgentTestHooks()
        let agent = try await gallery.startAgent(dir: dir) { $0.testHooks = hooks }
        let gate = try #require(hooks.renameGate)
        try await Self.waitForTheFirstPollsRescan(dir)
        let number = gallery.validNumbers[0]
        let path = dir.file("gallery_image_\(number).png")
        let requestsBefore = imageRequests.value.count

        gate.holdShut(true)
        unlink(path)
        let fetched = await eventually(timeout: .seconds(30)) {
            imageRequests.value.dropFirst(requestsBefore).contains("/gallery/image?\(number)")
        }
        #expect(fetched, "no request for the deleted file while the gate was shut")
        // The body waits at the gate written and flushed, in a file with no name: nothing was made in the temporary
        // folder that `rm -rf` could trip over, nothing is back in DIR.
        #expect(await eventually(timeout: .seconds(30)) { gate.waiters >= 1 })
        #expect(Self.temporaryFiles(in: dir) == [])
        #expect(Self.unnamedFileSizes(in: dir) == [gallery.server.imageBytes(number).count])
        #expect(access(path, F_OK) != 0)

        gate.holdShut(false)
        #expect(await eventually(timeout: .seconds(30)) { gallery.isMirrored(number, in: dir) })
        #expect(Self.temporaryFiles(in: dir) == [])
        #expect(Self.unnamedFileSizes(in: dir) == [])
        #expect(imageRequests.value.dropFirst(requestsBefore).filter { $0 == "/gallery/image?\(number)" }.count == 1)
        #expect(await agent.stop() == .success)
        await gallery.stop()
        #expect(logLines(dir.path).contains { $0.contains("event=repair") && $0.contains("key=/gallery/image?\(number)") })
    }

    /// A file recorded as larger than the write buffer could not wait in it: its repair waits for the gate before
    /// it asks the gallery, then fetches and stores it whole.
    @Test func aLargeFilesRepairWaitsForTheGateBeforeItsFetch() async throws {
        let imageRequests = Shared<[String]>([])
        let gallery = try await GalleryFixture(count: 20, imageSize: .small) { record in
            if record.path.hasPrefix("/gallery/image?") { imageRequests.append(record.path) }
        }
        let number = gallery.validNumbers[0]
        let large = try gallery.server.largeImageBytes(megabytes: 1)
        #expect(large.count > StreamedBodyFile.bufferSize)
        gallery.server.setFaults(GalleryFaults(imageFaults: [number: .large(megabytes: 1)]))
        let dir = TemporaryDirectory("gate-large")
        let hooks = AgentTestHooks()
        let agent = try await gallery.startAgent(dir: dir) { $0.testHooks = hooks }
        let gate = try #require(hooks.renameGate)
        try await Self.waitForTheFirstPollsRescan(dir)
        let path = dir.file("gallery_image_\(number).png")
        #expect(readBytes(path) == large)
        let requestsBefore = imageRequests.value.count

        gate.holdShut(true)
        unlink(path)
        #expect(await eventually(timeout: .seconds(30)) { gate.waiters >= 1 })
        // Waiting before its fetch, not with a body: the gallery has not been asked.
        #expect(!imageRequests.value.dropFirst(requestsBefore).contains("/gallery/image?\(number)"))

        gate.holdShut(false)
        #expect(await eventually(timeout: .seconds(30)) { readBytes(path) == large })
        #expect(Self.temporaryFiles(in: dir) == [])
        #expect(await agent.stop() == .success)
        await gallery.stop()
    }

    /// A pass's fetches keep their small bodies in their buffers while the gate is shut and make their temporary
    /// files only once it opens. Before, a cold sync made a named file in the state directory's `tmp/` for every body whatever DIR
    /// was going through, and `rm -rf DIR` during it failed with "cannot remove '.emojiart-sync/tmp': Directory not
    /// empty" (6 times in 20 by hand). The gate is held shut by the test from before the pass's first batch.
    @Test func aPassKeepsSmallBodiesInTheirBuffersWhileTheGateIsShut() async throws {
        let gallery = try await GalleryFixture(count: 40, imageSize: .small)
        let dir = TemporaryDirectory("gate-pass")
        let hooks = AgentTestHooks()
        hooks.setBeforePassBatch { _ in hooks.renameGate?.holdShut(true) }
        var configuration = try gallery.configuration(dir: dir.path)
        configuration.schedule.pollInterval = .seconds(3600)
        configuration.testHooks = hooks
        let agent = try await RunningAgent(configuration)
        let gate = try #require(await eventually { hooks.renameGate != nil } ? hooks.renameGate : nil)
        // Every image is fetched while the gate is shut: the pass's group of misses (`GroupFetch`) holds the bodies in
        // their buffers, its task waiting at the gate with the first one it took.
        let fetchedAll = await eventually(timeout: .seconds(30)) {
            gallery.validNumbers.allSatisfy { gallery.server.requestCount(path: "/gallery/image?\($0)") >= 1 }
        }
        #expect(fetchedAll)
        #expect(await eventually(timeout: .seconds(30)) { gate.waiters >= 1 }, "\(gate.waiters) waiting")
        #expect(Self.temporaryFiles(in: dir) == [])
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".png") } == [])
        hooks.setBeforePassBatch(nil)
        gate.holdShut(false)
        #expect(await eventually(timeout: .seconds(60)) { gallery.validNumbers.allSatisfy { gallery.isMirrored($0, in: dir) } })
        #expect(Self.temporaryFiles(in: dir) == [])
        #expect(await agent.stop() == .success)
        await gallery.stop()
    }

    /// Returns once the first poll has logged its line, which it writes after the rescan that follows a new feed.
    /// Every file is on disk before that rescan ends, and a rescan that finds the test's deletion repairs it as the
    /// scheduler's work (normal priority, its file made at once, only the rename waiting for the gate), not as the
    /// watcher's: this test looks at the watcher's repair alone. (Unlinking while the rescan still ran failed one
    /// fresh-clone CI run: a temporary file in `tmp/` with the gate held shut.)
    private static func waitForTheFirstPollsRescan(_ dir: TemporaryDirectory) async throws {
        let polled = await eventually(timeout: .seconds(30)) { logLines(dir.path).contains { $0.contains("event=poll") } }
        if !polled { throw TestFailure("the agent's first poll logged no line") }
    }

    /// The sizes of the files with no name (`O_TMPFILE`) this process holds open in the state directory's `tmp/`:
    /// `/proc/self/fd` shows one as `tmp/#INODE (deleted)`.
    private static func unnamedFileSizes(in dir: TemporaryDirectory) -> [Int] {
        let folder = dir.path + "/" + SyncDirectory.stateDirectoryName + "/tmp/#"
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.compactMap { fd -> Int? in
            let link = "/proc/self/fd/" + fd
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: link),
                target.hasPrefix(folder), target.hasSuffix(" (deleted)")
            else { return nil }
            var info = stat()
            return stat(link, &info) == 0 ? Int(info.st_size) : nil
        }
    }

    /// What the state directory's `tmp/` holds.
    private static func temporaryFiles(in dir: TemporaryDirectory) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: dir.path + "/" + SyncDirectory.stateDirectoryName + "/tmp")) ?? ["(unreadable)"]
    }
}
