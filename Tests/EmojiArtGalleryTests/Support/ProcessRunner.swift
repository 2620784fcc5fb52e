import Foundation
import Synchronization
import TestSupport

/// What a finished child process left behind.
struct ProcessOutcome: Sendable {
    var status: Int32
    /// Whether it exited (as opposed to being killed by a signal).
    var exited: Bool
    var stdout: String
    var stderr: String
}

/// Runs `executable` with `arguments` to completion on a thread of its own and collects its output.
func runProcess(_ executable: String, _ arguments: [String]) async throws -> ProcessOutcome {
    try await onOwnThread {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes to the end before waiting, so a chatty child cannot block on a full pipe.
        let errData = PipeDrain(err.fileHandleForReading)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ProcessOutcome(
            status: process.terminationStatus,
            exited: process.terminationReason == .exit,
            stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: errData.finish(), as: UTF8.self)
        )
    }
}

/// Drains a pipe on a thread of its own until end of file.
final class PipeDrain: Sendable {
    private let data = Mutex(Data())
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        let thread = Thread { [self] in
            let all = handle.readDataToEndOfFile()
            self.data.withLock { $0 = all }
            self.done.signal()
        }
        thread.start()
    }

    /// Waits for end of file and returns everything read.
    func finish() -> Data {
        done.wait()
        return data.withLock { $0 }
    }
}

/// The `emojiart-gallery` binary SwiftPM built next to the test bundle.
func galleryExecutablePath() throws -> String {
    let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let candidate = directory.appendingPathComponent("emojiart-gallery").path
    guard FileManager.default.isExecutableFile(atPath: candidate) else {
        throw TestFailure("emojiart-gallery is not built next to the tests (looked for \(candidate)); run `swift build` first")
    }
    return candidate
}
