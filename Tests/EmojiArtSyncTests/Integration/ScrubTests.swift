import CPNG
import EmojiArtGallery
import EmojiArtPNG
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Bit rot that leaves a file's fingerprint alone is trusted by a warm start and found by a scrub.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ScrubTests {
    @Test func aScrubFindsBitRotThatAWarmStartTrustsAndTheNextPassRepairsIt() async throws {
        let gallery = try await GalleryFixture(count: 6)
        let dir = TemporaryDirectory("scrub")
        let out = TemporaryDirectory("scrub-out")
        _ = try await gallery.syncOnce(dir: dir.path)
        let path = dir.file("gallery_image_3.png")
        try await rotInPlace(path, dir: dir.path)

        // A warm pass trusts the fingerprint: the rot goes unseen.
        let warm = try await gallery.syncOnce(dir: dir.path)
        #expect(warm.filesRead == 0 && warm.repairs == 0)
        #expect(readBytes(path) != gallery.server.imageBytes(3))

        let scrub = try await AgentProcess.run(["scrub", "--dir", dir.path, "-q"], outputDirectory: out.path)
        #expect(scrub.status == ExitStatus.partial.rawValue, "\(scrub.stderr)")
        #expect(scrub.stdout.contains("damaged: gallery_image_3.png"), "\(scrub.stdout)")
        #expect(scrub.stdout.contains("scrubbed \(gallery.validNumbers.count) files"))

        let repaired = try await gallery.syncOnce(dir: dir.path)
        #expect(repaired.repairs == 1)
        #expect(readBytes(path) == gallery.server.imageBytes(3))
        #expect(logLines(dir.path).contains { $0.contains("event=repair") && $0.contains("reason=corrupt") && $0.contains("key=/gallery/image?3") })

        let clean = try await AgentProcess.run(["scrub", "--dir", dir.path, "-q"], outputDirectory: out.path)
        #expect(clean.status == 0, "\(clean.stdout)")
        await gallery.stop()
    }

    /// Before: exit 3, "it scrubs in the background". Now the command asks the agent (`RequestInbox`), which
    /// scrubs at once, publishes what it found and repairs it.
    @Test func scrubAsksTheAgentRunningOnDirWhichRepairsWhatItFinds() async throws {
        let gallery = try await GalleryFixture(count: 6, imageSize: .small)
        let dir = TemporaryDirectory("scrub-agent")
        let out = TemporaryDirectory("scrub-agent-out")
        _ = try await gallery.syncOnce(dir: dir.path)
        let path = dir.file("gallery_image_3.png")
        try await rotInPlace(path, dir: dir.path)
        let agent = try await gallery.startAgent(dir: dir)  // a warm start: it trusts the rotten file

        let scrub = try await AgentProcess.run(["scrub", "--dir", dir.path, "--timeout", "30s"], outputDirectory: out.path)
        #expect(scrub.status == ExitStatus.partial.rawValue, "\(scrub.stdout) \(scrub.stderr)")
        #expect(scrub.stdout.contains("scrubbed \(gallery.validNumbers.count) files"), "\(scrub.stdout)")
        #expect(scrub.stdout.contains("damaged: gallery_image_3.png"), "\(scrub.stdout)")
        #expect(scrub.stderr.contains("asked agent PID"), "\(scrub.stderr)")
        #expect(await eventually { gallery.isMirrored(3, in: dir) }, "the agent repairs what its scrub found")
        #expect(!FileManager.default.fileExists(atPath: dir.file(".emojiart-sync/requests/scrub")), "the request was taken")

        let clean = try await AgentProcess.run(["scrub", "--dir", dir.path, "-q"], outputDirectory: out.path)
        #expect(clean.status == 0, "\(clean.stdout) \(clean.stderr)")
        #expect(await agent.stop() == .success)
        await gallery.stop()
        let lines = logLines(dir.path)
        #expect(lines.filter { $0.contains("event=scrub") && $0.contains("result=requested") }.count == 2)
        #expect(lines.contains { $0.contains("event=repair") && $0.contains("reason=corrupt") && $0.contains("key=/gallery/image?3") })
    }

    /// Before: `scrub`'s own log line said `files=0` after scrubbing every file; and a mistyped DIR was created,
    /// with an index, and scrubbed (exit 0).
    @Test func scrubCountsItsFilesAndNeverCreatesADirectory() async throws {
        let gallery = try await GalleryFixture(count: 4, imageSize: .small)
        let dir = TemporaryDirectory("scrub-count")
        let out = TemporaryDirectory("scrub-count-out")
        _ = try await gallery.syncOnce(dir: dir.path)
        await gallery.stop()
        let scrub = try await AgentProcess.run(["scrub", "--dir", dir.path, "-q"], outputDirectory: out.path)
        #expect(scrub.status == 0, "\(scrub.stdout) \(scrub.stderr)")
        let line = logLines(dir.path).last { $0.contains("event=scrub") && $0.contains("files=") }
        #expect(line?.contains("files=4 ") == true, "\(line ?? "no scrub line")")

        let typo = dir.path + "-typo"
        for command in [["scrub"], ["status"], ["status", "--json"], ["purge", "memory"]] {
            let run = try await AgentProcess.run(command + ["--dir", typo], outputDirectory: out.path)
            #expect(run.status == 1 && run.stderr.contains("\(typo): no such directory"), "\(command): \(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: typo), "\(command) created \(typo)")
        }
        let plain = TemporaryDirectory("scrub-plain")  // exists, but no agent ever synced it
        let unsynced = try await AgentProcess.run(["scrub", "--dir", plain.path], outputDirectory: out.path)
        #expect(unsynced.status == 1 && unsynced.stderr.contains("no agent has synced it"), "\(unsynced.stderr)")
        #expect(plain.names().isEmpty, "\(plain.names())")
    }

    /// Before: a file over 64 MiB was "larger than any image" to the read-back, so the scrub called a photo the agent
    /// had mirrored itself damaged, and the next pass fetched it again, for ever. Now it is read through fixed buffers,
    /// found intact, and found damaged when it is. The PNG is a 1x1 image with 64 MiB of zeros in padding chunks,
    /// sent deflated (`Content-Encoding: deflate`), so the test moves a few hundred KiB, not 64 MiB.
    @Test func aFileLargerThanTheOldReadBackCapIsScrubbedNotRefused() async throws {
        let gallery = try await GalleryFixture(count: 3, imageSize: .small)
        let large = try Self.paddedPNG(paddingChunks: 4)
        #expect(large.count > 64 << 20)
        let deflated = try Self.deflated(large)
        let server = try TestHTTPServer { request in
            let target = request.target
            guard target == "/gallery/image?2" else { return gallery.reply(for: target) }
            return .respond(
                status: 200, headers: [("Content-Type", "image/png"), ("Content-Encoding", "deflate")], body: deflated)
        }
        defer { server.stop() }
        let dir = TemporaryDirectory("scrub-large")
        let out = TemporaryDirectory("scrub-large-out")
        let address = try ServerAddress(server.origin)
        let report = try await gallery.syncOnce(dir: dir.path) { configuration in
            configuration.http.server = address
            configuration.http.maxBodySize = AgentConfiguration(directory: configuration.directory).http.maxBodySize
        }
        #expect(report.isComplete, "\(report.failures)")
        let path = dir.file("gallery_image_2.png")
        #expect(readBytes(path).map(SHA256Digest.hex(of:)) == SHA256Digest.hex(of: large), "mirrored byte-identical")

        let scrub = try await AgentProcess.run(["scrub", "--dir", dir.path, "-q"], outputDirectory: out.path)
        #expect(scrub.status == 0, "\(scrub.stdout) \(scrub.stderr)")
        #expect(scrub.stdout.contains("scrubbed 3 files"), "\(scrub.stdout)")
        #expect(scrub.stdout.contains(": 0 damaged"), "\(scrub.stdout)")

        try await rotInPlace(path, dir: dir.path)
        let rotten = try await AgentProcess.run(["scrub", "--dir", dir.path, "-q"], outputDirectory: out.path)
        #expect(rotten.status == ExitStatus.partial.rawValue, "\(rotten.stdout) \(rotten.stderr)")
        #expect(rotten.stdout.contains("damaged: gallery_image_2.png"), "\(rotten.stdout)")
        await gallery.stop()
    }

    /// A valid 1x1 PNG with `paddingChunks` private ancillary chunks (`paDd`) of 16 MiB of zeros each before IEND.
    static func paddedPNG(paddingChunks: Int) throws -> [UInt8] {
        let image = try PNGEncoder.encodeRGBA(width: 1, height: 1, pixels: [0x10, 0x20, 0x30, 0xFF])
        let size = 16 << 20
        var padding = Array("paDd".utf8) + [UInt8](repeating: 0, count: size)
        let crc = padding.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
        padding.removeFirst(4)
        func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        var png = Array(image.dropLast(12))
        png.reserveCapacity(png.count + paddingChunks * (size + 12) + 12)
        for _ in 0..<paddingChunks {
            png += bigEndian(UInt32(size)) + Array("paDd".utf8)
            png += padding
            png += bigEndian(crc)
        }
        return png + image.suffix(12)
    }

    /// `bytes` in zlib's format (`Content-Encoding: deflate`), at zlib's fastest level.
    static func deflated(_ bytes: [UInt8]) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(compressBound(uLong(bytes.count))))
        var count = uLongf(output.count)
        let code = bytes.withUnsafeBufferPointer { source in compress2(&output, &count, source.baseAddress, uLong(source.count), 1) }
        try #require(code == Z_OK)
        return Array(output.prefix(Int(count)))
    }

    /// Flips a byte in the middle of the file, then records the file's new fingerprint in the index: what a
    /// disk that rots a block under an unchanged inode leaves behind.
    @SyncActor
    private func rotInPlace(_ path: String, dir: String) throws {
        var bytes = try #require(readBytes(path))
        bytes[bytes.count / 2] ^= 0x01
        let fd = open(path, O_WRONLY)
        _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        close(fd)
        let (index, _) = try AssetIndex.open(directory: SyncDirectory(dir))
        let entry = try #require(try index.entry(named: (path as NSString).lastPathComponent))
        try index.setFingerprint(FileStatus.at(path)?.fingerprint, of: entry)
    }
}
