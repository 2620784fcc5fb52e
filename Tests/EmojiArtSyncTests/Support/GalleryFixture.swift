import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import Logging
import TestSupport

/// A real gallery on 127.0.0.1 (ephemeral port) plus a sync directory, for one test.
/// Call `stop()` at the end of the test.
final class GalleryFixture: Sendable {
    let server: GalleryServer
    let baseURL: String
    let count: Int

    /// `imageSize: .small` for tests of thousands of assets, where painting full-size images would cost more
    /// than the agent under test.
    /// `requestLogger` sees each request once its response is done or abandoned, with the bytes sent.
    init(
        count: Int = 29, faults: GalleryFaults = .none, imageSize: GalleryImageSize = .full,
        requestLogger: (@Sendable (GalleryRequestRecord) -> Void)? = nil
    ) async throws {
        self.count = count
        server = GalleryServer(configuration: GalleryConfiguration(
            host: "127.0.0.1", port: 0, count: count, faults: faults, imageSize: imageSize, requestLogger: requestLogger))
        baseURL = try await server.start()
    }

    func stop() async {
        await server.stop()
    }

    /// The port the gallery listens on, for a test that starts another gallery in its place.
    func port() throws -> Int {
        guard let port = baseURL.split(separator: ":").last.flatMap({ Int($0) }) else {
            throw TestFailure("the gallery's address \(baseURL) names no port")
        }
        return port
    }

    /// N's of the feed items the gallery serves real images for.
    var validNumbers: [Int] { (1...count).filter { !GalleryServer.isErrorItem($0, count: count) } }
    var errorNumbers: [Int] { (1...count).filter { GalleryServer.isErrorItem($0, count: count) } }

    /// An agent configuration for `dir` against this gallery: quiet, fast-failing.
    func configuration(dir: String) throws -> AgentConfiguration {
        var configuration = AgentConfiguration(directory: SyncDirectory(dir))
        configuration.http.server = try ServerAddress(baseURL)
        configuration.logging.toStandardError = false
        configuration.http.retries = 0
        configuration.http.connectTimeout = .seconds(10)
        configuration.http.stallTimeout = .seconds(10)
        return configuration
    }

    /// Builds an agent, runs one pass, shuts it down.
    func syncOnce(dir: String, adjust: (inout AgentConfiguration) -> Void = { _ in }) async throws -> SyncReport {
        var configuration = try configuration(dir: dir)
        adjust(&configuration)
        let agent = try await SyncAgent(configuration: configuration)
        defer { agent.shutdown() }
        return try await agent.syncOnce()
    }
}

/// The log lines of a sync directory's default log file (what agents of this process logged so far included:
/// their buffered lines are written first).
func logLines(_ dir: String) -> [String] {
    LogSink.flushAll()
    let text = (try? String(contentsOfFile: dir + "/.emojiart-sync/sync.log", encoding: .utf8)) ?? ""
    return text.split(separator: "\n").map(String.init)
}

/// A url path as long as the feed's limit (`GalleryFeed.maximumBodySize`), for the gallery's `extraFeedURLs`
/// fault: a feed that lists it is larger than the limit. Built from bytes, not `String(repeating:)`, which
/// appends 64 Mi characters one by one in a debug build.
func pathLongerThanTheFeedLimit() -> String {
    "/" + String(decoding: [UInt8](repeating: UInt8(ascii: "a"), count: GalleryFeed.maximumBodySize), as: UTF8.self)
}

extension GalleryFixture {
    /// What the gallery itself answers for `target` (the feed, each item once; an image's bytes; a 404), so a
    /// crafted server can serve the gallery's content and misbehave only where a test says so.
    func reply(for target: String) -> TestHTTPServer.Reply {
        if target == "/gallery/images", let feed = try? JSONEncoder().encode(server.uniqueItems) {
            return .respond(status: 200, headers: [("Content-Type", "application/json")], body: Array(feed))
        }
        if target.hasPrefix("/gallery/image?"), let n = Int(target.dropFirst("/gallery/image?".count)), (1...count).contains(n) {
            return .respond(status: 200, headers: [("Content-Type", "image/png")], body: server.imageBytes(n))
        }
        return .respond(status: 404, body: Array(#"{"error": "File not found."}"#.utf8))
    }
}
