@testable import EmojiArtSync
import Foundation
import Logging
import Synchronization
import Testing

/// How the background agent stops, as `AgentStop` keeps it: the first stop wins (systemd hears `STOPPING=1`
/// once), the first fatal error is the one reported, and a fatal error shuts the rename gate for good.
@Suite struct AgentStopTests {
    @Test func theFirstStopWinsAndTheFirstFatalErrorIsKept() async throws {
        let socket = try NotifySocket(try #require(UnixSocketAddress("@emojiart-sync-stop-\(UUID().uuidString)")))
        let notifier = SystemdNotifier(socket: socket.address)
        let gate = RenameGate()
        let stop = AgentStop(notifier: notifier, gate: gate, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        #expect(!stop.isRequested)
        #expect(await gate.waitUntilOpen() == nil)

        stop.request()
        stop.fail(SyncError(.system, "DIR was removed"))
        stop.fail(SyncError(.system, "cannot watch DIR"))
        stop.request()
        notifier.status("end of test")  // the last message: everything before it was sent by the stops

        let (_, before) = try await socket.next(timeout: .seconds(10)) { $0.contains("end of test") }
        #expect(before.filter { $0.contains("STOPPING=1") }.count == 1, "\(before)")
        #expect(stop.isRequested)
        #expect(stop.failure?.message == "DIR was removed")
        #expect(await gate.waitUntilOpen() == "DIR was removed", "a fatal error shuts the gate for good")
    }

    /// Every job that meets the agent's end reports it: the log says it once, naming the first cause.
    @Test func theFatalErrorIsLoggedOnce() {
        let lines = RecordedLines()
        let stop = AgentStop(
            notifier: SystemdNotifier(socket: nil), gate: RenameGate(), logger: Logger(label: "test") { _ in lines })
        for _ in 0..<3 { stop.fail(SyncError(.system, "DIR is gone: it was deleted")) }
        stop.fail(SyncError(.system, "cannot watch DIR"))
        #expect(lines.lines == ["critical stopping DIR is gone: it was deleted"])
    }
}

/// A log handler that keeps each line's level, message and `error` metadata.
private struct RecordedLines: LogHandler {
    private let storage = LockedLines()
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    var lines: [String] { storage.lines.withLock { $0 } }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let error = event.metadata?["error"].map { " \($0)" } ?? ""
        storage.lines.withLock { $0.append("\(event.level) \(event.message)\(error)") }
    }
}

private final class LockedLines: Sendable {
    let lines = Mutex<[String]>([])
}
