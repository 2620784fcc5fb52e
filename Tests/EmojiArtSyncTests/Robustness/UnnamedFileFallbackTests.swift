import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A file system without unnamed files (`O_TMPFILE` answers `EOPNOTSUPP`: some network and FUSE file systems): a
/// repair's body waits for the rename gate in memory instead, and is written to a named temporary file once the gate
/// opens. The test-only switch `EMOJIART_SYNC_TEST_FAULT=o-tmpfile-eopnotsupp` (read once, in CShims) makes every
/// such open fail that way, in the agent run as a child process.
@Suite(.timeLimit(.minutes(2)))
struct UnnamedFileFallbackTests {
    @Test func withoutUnnamedFilesADeletedFileIsStillRepaired() async throws {
        let gallery = try await GalleryFixture(count: 9)
        let out = TemporaryDirectory("unnamed-fallback-out")
        let dir = TemporaryDirectory("unnamed-fallback")
        let agent = try AgentProcess(
            ["--dir", dir.path, "--server", gallery.baseURL, "--interval", "1h", "-q"], outputDirectory: out.path,
            environment: ["EMOJIART_SYNC_TEST_FAULT": "o-tmpfile-eopnotsupp"])
        let polled = await eventually(timeout: .seconds(60)) { logLines(dir.path).contains { $0.contains("event=poll") } }
        #expect(polled, "the agent's first poll logged no line")
        let number = gallery.validNumbers[0]
        #expect(gallery.isMirrored(number, in: dir))
        unlink(dir.file("gallery_image_\(number).png"))
        #expect(await eventually(timeout: .seconds(30)) { gallery.isMirrored(number, in: dir) })
        #expect(await eventually(timeout: .seconds(30)) {
            logLines(dir.path).contains { $0.contains("event=repair") && $0.contains("key=/gallery/image?\(number)") }
        })
        agent.signal(SIGTERM)
        #expect(await agent.waitForExit() == 0)
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty, "temporary files left behind")
        await gallery.stop()
    }
}
