import EmojiArtGallery
import Foundation
import TestSupport

/// Runs `body` against a fresh gallery on 127.0.0.1 with a kernel-chosen port, and stops the
/// gallery afterwards whether `body` returns or throws. Each test gets its own server, so tests
/// can change faults and counts while running in parallel.
func withGallery<Result>(
    count: Int = 29,
    faults: GalleryFaults = .none,
    imageSize: GalleryImageSize = .full,
    requestLogger: (@Sendable (GalleryRequestRecord) -> Void)? = nil,
    _ body: (GalleryServer, String) async throws -> Result
) async throws -> Result {
    let server = GalleryServer(configuration: GalleryConfiguration(
        host: "127.0.0.1", port: 0, count: count, faults: faults, imageSize: imageSize, requestLogger: requestLogger))
    let baseURL = try await server.start()
    do {
        let result = try await body(server, baseURL)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}

/// The `emojiart-gallery` binary SwiftPM built next to the test bundle.
func galleryExecutablePath() throws -> String {
    let candidate = ChildProcess.builtProduct("emojiart-gallery")
    guard FileManager.default.isExecutableFile(atPath: candidate) else {
        throw TestFailure("emojiart-gallery is not built next to the tests (looked for \(candidate)); run `swift build` first")
    }
    return candidate
}
