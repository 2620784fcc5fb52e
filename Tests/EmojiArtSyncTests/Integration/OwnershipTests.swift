import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

/// Files the agent did not write are never modified, moved or deleted; symlinks are never written through.
@Suite(.timeLimit(.minutes(2)))
struct OwnershipTests {
    @Test func symlinkAtAnAssetPathLeavesItsTargetUntouched() async throws {
        let gallery = try await GalleryFixture(count: 5)
        let dir = TemporaryDirectory("symlink")
        let outside = TemporaryDirectory("outside")
        let precious: [UInt8] = Array("precious user data\n".utf8)
        try writeBytes(precious, to: outside.file("precious.txt"))
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir.file("gallery_image_1.png"), withDestinationPath: outside.file("precious.txt"))

        let report = try await gallery.syncOnce(dir: dir.path)
        await gallery.stop()
        #expect(readBytes(outside.file("precious.txt")) == precious)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: dir.file("gallery_image_1.png")) == outside.file("precious.txt"))
        #expect(report.failures.map(\.key.rawValue) == ["/gallery/image?1"])
        #expect(logLines(dir.path).contains { $0.contains("event=conflict") && $0.contains("key=/gallery/image?1") })
        for n in 2...5 {
            #expect(readBytes(dir.file("gallery_image_\(n).png")) == gallery.server.imageBytes(n))
        }
    }

    @Test func usersOwnFilesSurviveUntouchedEvenAtAnAssetPath() async throws {
        let gallery = try await GalleryFixture(count: 5)
        let dir = TemporaryDirectory("userfiles")
        let notes: [UInt8] = Array("my notes\n".utf8)
        let mine: [UInt8] = Array("not a png, but mine\n".utf8)
        try writeBytes(notes, to: dir.file("notes.txt"))
        try writeBytes(mine, to: dir.file("gallery_image_2.png"))

        let first = try await gallery.syncOnce(dir: dir.path)
        #expect(first.failures.map(\.key.rawValue) == ["/gallery/image?2"])
        // Purging and re-running must not touch them either.
        let second = try await gallery.syncOnce(dir: dir.path)
        await gallery.stop()
        #expect(second.failures.map(\.key.rawValue) == ["/gallery/image?2"])
        #expect(readBytes(dir.file("notes.txt")) == notes)
        #expect(readBytes(dir.file("gallery_image_2.png")) == mine)
    }

    @Test func anIdenticalUnrecordedFileIsAdoptedWithoutBeingRewritten() async throws {
        // What a crash between rename and manifest save leaves behind: the right bytes, no record.
        let gallery = try await GalleryFixture(count: 3)
        let dir = TemporaryDirectory("adopt")
        try writeBytes(gallery.server.imageBytes(1), to: dir.file("gallery_image_1.png"))
        let inodeBefore = try FileManager.default.attributesOfItem(atPath: dir.file("gallery_image_1.png"))[.systemFileNumber] as? Int

        let report = try await gallery.syncOnce(dir: dir.path)
        await gallery.stop()
        #expect(report.isComplete)
        let inodeAfter = try FileManager.default.attributesOfItem(atPath: dir.file("gallery_image_1.png"))[.systemFileNumber] as? Int
        #expect(inodeBefore == inodeAfter, "adoption must not replace the file")
        #expect(logLines(dir.path).contains { $0.contains("event=adopt") && $0.contains("key=/gallery/image?1") })
    }
}
