import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

/// A body goes to a temporary file as it arrives; an answer that is an error makes no file at all. Before, the
/// file was made when the request started and removed when the error came: a DIR turned read-only in between
/// kept it (ReadOnlyDirectoryTests found one), and every error item cost a create and an unlink.
@Suite(.timeLimit(.minutes(1)))
struct ErrorAnswerTemporaryFileTests {
    @Test func aRequestInFlightThatWillBeAnErrorHasMadeNoTemporaryFile() async throws {
        let gallery = try await GalleryFixture(count: 1, faults: GalleryFaults(allImages: .serverError))
        let dir = TemporaryDirectory("error-no-tmp")
        // The image request is held at the gallery (a barrier no second request will meet) until released below:
        // while it is held, the agent has sent it and has no answer yet.
        gallery.server.holdImageRequests(untilAnswering: 2, timeout: .seconds(50))
        let path = dir.path
        let run = Task { try await gallery.syncOnce(dir: path) { $0.http.retries = 0 } }
        let sent = await eventually(timeout: .seconds(30)) { gallery.server.imageRequestCount >= 1 }
        #expect(sent, "the agent never asked for the image")
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty, "a temporary file exists before any byte of a body came")
        gallery.server.holdImageRequests(untilAnswering: 0, timeout: .zero)  // releases the held request
        let report = try await run.value
        await gallery.stop()
        #expect(report.failures.contains { $0.key.rawValue == "/gallery/image?1" })
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty, "temporary files left behind")
    }
}
