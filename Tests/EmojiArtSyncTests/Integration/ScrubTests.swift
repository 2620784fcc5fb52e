import EmojiArtGallery
import EmojiArtSync
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

    @Test func scrubRefusesADirectoryAnAgentRunsOn() async throws {
        let gallery = try await GalleryFixture(count: 3)
        let dir = TemporaryDirectory("scrub-locked")
        let out = TemporaryDirectory("scrub-locked-out")
        let agent = try await gallery.startAgent(dir: dir)
        let scrub = try await AgentProcess.run(["scrub", "--dir", dir.path, "-q"], outputDirectory: out.path)
        #expect(scrub.status == ExitStatus.locked.rawValue)
        #expect(scrub.stderr.contains("scrubs in the background"))
        #expect(await agent.stop() == .success)
        await gallery.stop()
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
        try index.setFingerprint(FileFingerprint.of(path), named: (path as NSString).lastPathComponent)
    }
}
