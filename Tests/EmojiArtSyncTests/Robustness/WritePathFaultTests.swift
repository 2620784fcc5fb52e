import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A tmpfs mounted on a test's DIR, so the test can fill it (ENOSPC): what
/// really fails for root, whom `chmod` does not stop. Needs root and a kernel that lets the test mount.
final class TmpfsMount {
    let path: String

    /// Whether this process may mount a tmpfs (root in a sandbox that permits it), probed once.
    static let available: Bool = {
        guard getuid() == 0 else { return false }
        let probe = TemporaryDirectory("tmpfs-probe")
        guard (try? TmpfsMount(at: probe.path, size: "64k")) != nil else { return false }
        return true
    }()

    init(at path: String, size: String) throws {
        self.path = path
        try Self.mount(["-t", "tmpfs", "-o", "size=\(size),mode=0755", "tmpfs", path])
    }

    deinit { _ = umount2(path, Int32(MNT_DETACH)) }

    /// Runs `/bin/mount` with `arguments`; throws when it fails.
    static func mount(_ arguments: [String]) throws {
        let mount = try ChildProcess.runBlocking(executable: "/bin/mount", arguments, mergingStandardError: true)
        guard mount.status == 0 else { throw TestFailure("mount \(arguments.joined(separator: " ")) failed: \(mount.stdout)") }
    }
}

/// Faults on the real write path: a full disk, and (below) a file root may not replace. Each gives one
/// clear log line per failed write, leaves no partial file in DIR or its tmp/, loses nothing already synced,
/// and clears on its own (retry with backoff) once the condition does.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TmpfsMount.available, "needs root and permission to mount a tmpfs"))
struct WritePathFaultTests {
    /// Images 1...5 sync; 6...9 fail at the gallery until `clear` lifts that, so they are written under the fault.
    static let heldBack = GalleryFaults(imageFaults: [6: .serverError, 7: .serverError, 8: .serverError, 9: .serverError])

    /// Runs the agent on a tmpfs DIR, applies `fault` once 1...5 are synced, lets 6...9 be written under it,
    /// then lifts it with `lift` and expects 6...9 to arrive without any help. `errnoText` is what the log must
    /// name. The log goes to a file outside DIR (DIR is what fails).
    func runUnderFault(
        label: String, errnoText: String, fault: (TmpfsMount, TemporaryDirectory) throws -> Void,
        lift: (TmpfsMount, TemporaryDirectory) throws -> Void
    ) async throws {
        let gallery = try await GalleryFixture(count: 9, faults: Self.heldBack)
        let dir = TemporaryDirectory(label)
        let logs = TemporaryDirectory(label + "-log")
        let mount = try TmpfsMount(at: dir.path, size: "4m")
        let agent = try await RunningAgent(Self.configuration(gallery, dir: dir, logs: logs))
        #expect(await eventually { (1...5).allSatisfy { gallery.isMirrored($0, in: dir) } })
        let synced = (1...5).map { readBytes(dir.file("gallery_image_\($0).png")) }

        try fault(mount, dir)
        gallery.server.setFaults(.none)
        let lines = {
            LogSink.flushAll()
            return ((try? String(contentsOfFile: logs.file("sync.log"), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        // Every held-back image was tried under the fault and its failure logged, naming the cause.
        let tried = await eventually {
            let failed = lines().filter { $0.contains("event=asset") && $0.contains("result=failed") && $0.contains(errnoText) }
            return (6...9).allSatisfy { n in failed.contains { $0.split(separator: " ").contains("key=/gallery/image?\(n)") } }
        }
        #expect(tried, "no clear failure line naming \(errnoText)")
        #expect((6...9).allSatisfy { !FileManager.default.fileExists(atPath: dir.file("gallery_image_\($0).png")) }, "no partial file in DIR")
        // The agent keeps retrying under the fault, so an attempt's temporary file can exist at any instant; what
        // must hold is that every failed attempt removes its own (a leaked one would stay, and this would time out).
        #expect(await eventually { dir.names(in: ".emojiart-sync/tmp").isEmpty }, "a partial file stayed in tmp/")
        #expect((1...5).map { readBytes(dir.file("gallery_image_\($0).png")) } == synced, "nothing already synced is lost")

        try lift(mount, dir)
        let recovered = await eventually(timeout: .seconds(30)) { (1...9).allSatisfy { gallery.isMirrored($0, in: dir) } }
        #expect(recovered, "the agent recovers on its own once the condition clears")
        #expect(await agent.stop() == .success)
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)
        let names = try await indexedFileNames(in: dir.path)
        #expect((1...9).allSatisfy { names.contains("gallery_image_\($0).png") }, "the index caught up")
        await gallery.stop()
    }

    /// An agent on `dir` that logs to `logs` (DIR may become unwritable), polls only when told, and retries
    /// failed writes within about a second, so recovery follows the condition clearing.
    static func configuration(_ gallery: GalleryFixture, dir: TemporaryDirectory, logs: TemporaryDirectory) throws -> AgentConfiguration {
        var configuration = try gallery.configuration(dir: dir.path)
        configuration.schedule.pollInterval = .seconds(3600)
        configuration.logging.file = logs.file("sync.log")
        configuration.http.retryPolicy = RetryPolicy(base: .milliseconds(200), cap: .seconds(1), jitter: 0.2)
        return configuration
    }

    @Test func aFullDiskFailsCleanlyAndRecovers() async throws {
        try await runUnderFault(label: "enospc", errnoText: "No space left on device") { _, dir in
            // The user fills the disk.
            let fd = open(dir.file("filler"), O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard fd >= 0 else { throw TestFailure("cannot create filler: errno \(errno)") }
            defer { close(fd) }
            let block = [UInt8](repeating: 0xAB, count: 64 * 1024)
            while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
            guard errno == ENOSPC else { throw TestFailure("filling stopped with errno \(errno), not ENOSPC") }
        } lift: { _, dir in
            unlink(dir.file("filler"))
        }
    }
}

/// Root ignores permission bits, but not the immutable attribute: a damaged file the agent may not replace.
@Suite(.timeLimit(.minutes(2)), .enabled(if: getuid() == 0, "needs root for chattr +i"))
struct ImmutableFileTests {
    static func chattr(_ flag: String, _ path: String) throws {
        let chattr = try ChildProcess.runBlocking(executable: "/usr/bin/chattr", [flag, path], mergingStandardError: true)
        guard chattr.status == 0 else { throw TestFailure("chattr \(flag) \(path) failed: \(chattr.stdout)") }
    }

    @Test func aFileThatCannotBeReplacedIsReportedLeftAndRepairedOnceItCanBe() async throws {
        let gallery = try await GalleryFixture(count: 5)
        let dir = TemporaryDirectory("immutable")
        _ = try await gallery.syncOnce(dir: dir.path)
        let damaged = Array("damaged".utf8)
        try writeBytes(damaged, to: dir.file("gallery_image_1.png"))
        try Self.chattr("+i", dir.file("gallery_image_1.png"))
        defer { try? Self.chattr("-i", dir.file("gallery_image_1.png")) }

        let blocked = try await gallery.syncOnce(dir: dir.path)
        #expect(blocked.failures.map(\.key.rawValue) == ["/gallery/image?1"])
        #expect(blocked.failures.first?.reason.contains("Operation not permitted") == true, "\(blocked.failures)")
        #expect(readBytes(dir.file("gallery_image_1.png")) == damaged)
        #expect((2...5).allSatisfy { gallery.isMirrored($0, in: dir) })
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)

        try Self.chattr("-i", dir.file("gallery_image_1.png"))
        let repaired = try await gallery.syncOnce(dir: dir.path)
        #expect(repaired.isComplete)
        #expect(gallery.isMirrored(1, in: dir))
        await gallery.stop()
    }
}
