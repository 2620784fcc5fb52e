import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport

/// A background agent running in this process (signals left to the test runner), for one test.
final class RunningAgent: Sendable {
    let background: BackgroundAgent
    let task: Task<ExitStatus, Never>

    init(_ configuration: AgentConfiguration) async throws {
        let agent = try await SyncAgent(configuration: configuration)
        let background = await BackgroundAgent(agent: agent)
        self.background = background
        task = Task { await background.run(handleSignals: false) }
    }

    var keeper: MirrorKeeper { background.keeper }

    /// Stops gracefully and returns the exit status.
    func stop() async -> ExitStatus {
        background.stop()
        return await task.value
    }
}

extension GalleryFixture {
    /// Starts a background agent on `dir` and waits until every valid asset is on disk. When that does not
    /// happen within `timeout`, stops the agent and throws: the test fails, never the whole run. The default
    /// leaves a slow 2-core machine running a debug build about ten times what a fast one needs.
    func startAgent(
        dir: TemporaryDirectory, timeout: Duration? = nil, adjust: (inout AgentConfiguration) -> Void = { _ in }
    ) async throws -> RunningAgent {
        var configuration = try configuration(dir: dir.path)
        configuration.schedule.pollInterval = .seconds(3600)
        adjust(&configuration)
        let agent = try await RunningAgent(configuration)
        let limit = timeout ?? .seconds(30 + count / 10)
        let synced = await eventually(timeout: limit) {
            validNumbers.allSatisfy { FileManager.default.fileExists(atPath: dir.file("gallery_image_\($0).png")) }
        }
        guard synced else {
            _ = await agent.stop()
            let missing = validNumbers.filter { !FileManager.default.fileExists(atPath: dir.file("gallery_image_\($0).png")) }
            throw TestFailure("the agent's first sync did not finish within \(limit): \(missing.count) of \(validNumbers.count) files missing")
        }
        return agent
    }

    func isMirrored(_ n: Int, in dir: TemporaryDirectory) -> Bool {
        readBytes(dir.file("gallery_image_\(n).png")) == server.imageBytes(n)
    }
}
