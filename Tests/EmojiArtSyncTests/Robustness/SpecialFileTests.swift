import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import Logging
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A FIFO, a directory, a socket or a hard link at an asset's path: never opened, never written through, never
/// adopted, never blocking; reported once per path (not once per poll) and left alone.
@Suite(.timeLimit(.minutes(3)))
struct SpecialFileTests {
    /// Puts a FIFO at image 1's path, a directory at 2's, a bound AF_UNIX socket at 3's, and a hard link of the
    /// user's `mine.png` (byte-identical to image 4, so adoption would be tempting) at 4's.
    final class Obstacles {
        let dir: TemporaryDirectory
        let socket: Int32
        let mineInode: UInt

        init(in dir: TemporaryDirectory, gallery: GalleryFixture) throws {
            self.dir = dir
            guard mkfifo(dir.file("gallery_image_1.png"), 0o644) == 0 else { throw TestFailure("mkfifo: errno \(errno)") }
            guard mkdir(dir.file("gallery_image_2.png"), 0o755) == 0 else { throw TestFailure("mkdir: errno \(errno)") }
            socket = try Self.bindUnixSocket(at: dir.file("gallery_image_3.png"))
            try writeBytes(gallery.server.imageBytes(4), to: dir.file("mine.png"))
            guard link(dir.file("mine.png"), dir.file("gallery_image_4.png")) == 0 else { throw TestFailure("link: errno \(errno)") }
            mineInode = try Self.lstatOrThrow(dir.file("mine.png")).st_ino.magnitude
        }

        deinit { close(socket) }

        static func bindUnixSocket(at path: String) throws -> Int32 {
            let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw TestFailure("socket: errno \(errno)") }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw TestFailure("socket path too long") }
            withUnsafeMutableBytes(of: &address.sun_path) { buffer in
                buffer.copyBytes(from: bytes)
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard bound == 0 else { close(fd); throw TestFailure("bind: errno \(errno)") }
            return fd
        }

        static func lstatOrThrow(_ path: String) throws -> stat {
            var info = stat()
            guard lstat(path, &info) == 0 else { throw TestFailure("lstat \(path): errno \(errno)") }
            return info
        }

        static func kind(_ path: String) -> mode_t? {
            var info = stat()
            guard lstat(path, &info) == 0 else { return nil }
            return info.st_mode & S_IFMT
        }

        /// Every obstacle is still exactly what the user put there.
        func areUntouched(_ gallery: GalleryFixture) throws -> Bool {
            let hardLink = try Self.lstatOrThrow(dir.file("gallery_image_4.png"))
            return Self.kind(dir.file("gallery_image_1.png")) == S_IFIFO
                && Self.kind(dir.file("gallery_image_2.png")) == S_IFDIR
                && dir.names(in: "gallery_image_2.png").isEmpty
                && Self.kind(dir.file("gallery_image_3.png")) == S_IFSOCK
                && hardLink.st_ino.magnitude == mineInode && hardLink.st_nlink == 2
                && readBytes(dir.file("mine.png")) == gallery.server.imageBytes(4)
        }
    }

    static func conflictLines(_ dir: TemporaryDirectory, key n: Int) -> Int {
        logLines(dir.path).filter { line in
            let fields = line.split(separator: " ")
            return fields.contains("event=conflict") && fields.contains("key=/gallery/image?\(n)")
        }.count
    }

    @Test func onceRunsFinishReportEachObstacleOnceAndTouchNothing() async throws {
        let gallery = try await GalleryFixture(count: 9)
        let out = TemporaryDirectory("special-once-out")
        let dir = TemporaryDirectory("special-once")
        let obstacles = try Obstacles(in: dir, gallery: gallery)
        for pass in 1...2 {
            let run = try await AgentProcess.run(["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q"], outputDirectory: out.path, timeout: .seconds(60))
            #expect(run.status == ExitStatus.partial.rawValue, "pass \(pass): \(String(describing: run.status)) \(run.stderr)")
            for n in 1...4 { #expect(run.stderr.contains("/gallery/image?\(n)"), "pass \(pass): \(n) not reported") }
            for n in 5...9 { #expect(gallery.isMirrored(n, in: dir)) }
            #expect(try obstacles.areUntouched(gallery))
            for n in 1...4 { #expect(Self.conflictLines(dir, key: n) == pass, "pass \(pass), image \(n)") }
        }
        #expect(!logLines(dir.path).contains { $0.contains("event=adopt") }, "a hard link to the user's file is never adopted")
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)
        await gallery.stop()
    }

    @Test func theBackgroundAgentReportsEachObstacleOnceAcrossPollsAndKeepsWorking() async throws {
        let gallery = try await GalleryFixture(count: 9)
        let dir = TemporaryDirectory("special-agent")
        let obstacles = try Obstacles(in: dir, gallery: gallery)
        var configuration = try gallery.configuration(dir: dir.path)
        configuration.schedule.pollInterval = .seconds(3600)
        configuration.logging.level = .debug  // an unchanged feed's poll (a 304) is logged at that level; polls are counted
        let agent = try await RunningAgent(configuration)
        #expect(await eventually { (5...9).allSatisfy { gallery.isMirrored($0, in: dir) } })
        #expect(await eventually { pollLines(dir) >= 1 })

        // One of the agent's own files is replaced by a FIFO while it runs.
        #expect(mkfifo(dir.file("incoming.fifo"), 0o644) == 0)
        #expect(rename(dir.file("incoming.fifo"), dir.file("gallery_image_5.png")) == 0)
        // Three polls; each one rechecks every path.
        for round in 2...4 {
            await agent.keeper.pollNow()
            #expect(await eventually { pollLines(dir) >= round })
        }
        // Still responsive: a deleted file of its own comes back.
        unlink(dir.file("gallery_image_6.png"))
        #expect(await eventually { gallery.isMirrored(6, in: dir) })

        #expect(try obstacles.areUntouched(gallery))
        #expect(Obstacles.kind(dir.file("gallery_image_5.png")) == S_IFIFO)
        for n in 1...5 { #expect(Self.conflictLines(dir, key: n) == 1, "image \(n): one conflict line per path, not one per poll") }
        #expect(!logLines(dir.path).contains { $0.contains("event=adopt") })
        #expect(await agent.stop() == .success)
        await gallery.stop()
    }
}
