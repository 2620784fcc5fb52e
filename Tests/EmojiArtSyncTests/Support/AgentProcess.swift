import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The built `emojiart-sync` binary, run as a child process the way a user runs it.
final class AgentProcess {
    /// Where SwiftPM put the products of this build (the test bundle sits next to them).
    static var binary: String {
        let bundleDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return bundleDirectory.appendingPathComponent("emojiart-sync").path
    }

    let process = Process()
    let stdoutPath: String
    let stderrPath: String

    /// Starts the agent with `arguments`; `environment` is added to the test's own, `stderrPath` (created when
    /// missing) receives its stderr instead of a new file in `outputDirectory`.
    init(
        _ arguments: [String], outputDirectory: String, environment: [String: String] = [:], stderrPath: String? = nil
    ) throws {
        stdoutPath = outputDirectory + "/agent-\(UUID().uuidString).out"
        self.stderrPath = stderrPath ?? outputDirectory + "/agent-\(UUID().uuidString).err"
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        if !FileManager.default.fileExists(atPath: self.stderrPath) {
            _ = FileManager.default.createFile(atPath: self.stderrPath, contents: nil)
        }
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        }
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: self.stderrPath))
        try process.run()
    }

    var pid: pid_t { process.processIdentifier }
    var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    func signal(_ number: Int32) { kill(pid, number) }

    /// Waits for exit; returns the status, or nil on timeout (then kills the process).
    func waitForExit(timeout: Duration = .seconds(10)) async -> Int32? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while process.isRunning {
            if ContinuousClock.now > deadline {
                process.terminate()
                kill(pid, SIGKILL)
                return nil
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return process.terminationStatus
    }

    /// Runs to completion and returns the exit status.
    static func run(
        _ arguments: [String], outputDirectory: String, environment: [String: String] = [:], timeout: Duration = .seconds(60)
    ) async throws -> (status: Int32?, stdout: String, stderr: String) {
        let child = try AgentProcess(arguments, outputDirectory: outputDirectory, environment: environment)
        let status = await child.waitForExit(timeout: timeout)
        return (status, child.stdout, child.stderr)
    }
}
