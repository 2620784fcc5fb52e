import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

/// A file system without `renameat2(RENAME_NOREPLACE)` (it answers `EINVAL`): new assets are installed with
/// `link(2)` + `unlink(2)` instead, with the same never-replace guarantee. The test-only switch
/// `EMOJIART_SYNC_TEST_FAULT=renameat2-einval` (read once, in CShims) makes every `renameat2` fail that way.
@Suite(.timeLimit(.minutes(2)))
struct RenameFallbackTests {
    @Test func withoutRenameat2EveryAssetIsStillInstalledAndNoUserFileReplaced() async throws {
        let gallery = try await GalleryFixture(count: 9)
        let out = TemporaryDirectory("noreplace-out")
        let dir = TemporaryDirectory("noreplace")
        let mine = Array("the user's, not a png\n".utf8)
        try writeBytes(mine, to: dir.file("gallery_image_2.png"))
        let run = try await AgentProcess.run(
            ["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q"], outputDirectory: out.path,
            // Named temporary files too (no `O_TMPFILE`): the cold sync's files are renamed, not linked, into place.
            environment: ["EMOJIART_SYNC_TEST_FAULT": "renameat2-einval,o-tmpfile-eopnotsupp"])
        #expect(run.status == ExitStatus.partial.rawValue, "\(run.stderr)")
        #expect(readBytes(dir.file("gallery_image_2.png")) == mine, "the user's file is never replaced")
        for n in [1, 3, 4, 5, 6, 7, 8, 9] {
            #expect(gallery.isMirrored(n, in: dir), "image \(n) not installed: \(run.stderr)")
        }
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty, "temporary files left behind")
        #expect(logLines(dir.path).contains { $0.contains("event=conflict") && $0.contains("key=/gallery/image?2") })
        await gallery.stop()
    }
}
