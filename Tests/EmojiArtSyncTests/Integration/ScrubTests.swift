import EmojiArtGallery
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
