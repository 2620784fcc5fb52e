import EmojiArtGallery
import EmojiArtSync
import Foundation

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
    /// Starts a background agent on `dir` and waits until every valid asset is on disk.
    func startAgent(dir: TemporaryDirectory, adjust: (inout AgentConfiguration) -> Void = { _ in }) async throws -> RunningAgent {
        var configuration = try configuration(dir: dir.path)
        configuration.pollInterval = .seconds(3600)
        adjust(&configuration)
        let agent = try await RunningAgent(configuration)
        let synced = await eventually(timeout: .seconds(60)) {
            validNumbers.allSatisfy { FileManager.default.fileExists(atPath: dir.file("gallery_image_\($0).png")) }
        }
        precondition(synced, "the agent did not finish its first sync")
        return agent
    }

    func isMirrored(_ n: Int, in dir: TemporaryDirectory) -> Bool {
        readBytes(dir.file("gallery_image_\(n).png")) == server.imageBytes(n)
    }
}
