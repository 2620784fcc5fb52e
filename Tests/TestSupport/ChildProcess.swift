import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A program of this build (or any executable) run as a child process, the way a person runs it: the tests' one
/// process runner. Its stdout and stderr go to files (a chatty child never blocks on a full pipe, and a test reads
/// them while it runs), and it is waited for by polling, never by parking a thread of the cooperative pool.
public final class ChildProcess {
    /// Where SwiftPM put the products of this build (the test bundle sits next to them): `name`'s path there.
    public static func builtProduct(_ name: String) -> String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name).path
    }

    public let process = Process()
    public let stdoutPath: String
    public let stderrPath: String
    /// The output files' directory when the caller gave none: removed with the process object.
    private let scratch: TemporaryDirectory?

    /// Starts `executable` with `arguments`; `environment` is added to the test's own. The output files go to
    /// `outputDirectory` (a scratch directory of its own when nil); `stderrPath` (created when missing) receives
    /// stderr instead of a new file there.
    public init(
        executable: String, _ arguments: [String], outputDirectory: String? = nil, environment: [String: String] = [:],
        stderrPath: String? = nil
    ) throws {
        scratch = outputDirectory == nil ? TemporaryDirectory("child") : nil
        let directory = outputDirectory ?? scratch!.path
        stdoutPath = directory + "/child-\(UUID().uuidString).out"
        self.stderrPath = stderrPath ?? directory + "/child-\(UUID().uuidString).err"
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        if !FileManager.default.fileExists(atPath: self.stderrPath) {
            _ = FileManager.default.createFile(atPath: self.stderrPath, contents: nil)
        }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        }
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: self.stderrPath))
        try process.run()
    }

    public var pid: pid_t { process.processIdentifier }
    public var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    public var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
    /// Whether it exited, rather than being killed by a signal (once it has ended).
    public var exited: Bool { process.terminationReason == .exit }

    public func signal(_ number: Int32) { kill(pid, number) }

    /// Waits for exit; returns the status, or nil on timeout (then kills the process).
    public func waitForExit(timeout: Duration = .seconds(10)) async -> Int32? {
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

    /// What a finished child left behind.
    public struct Outcome: Sendable {
        /// The exit status, or the signal's number when it was killed; nil when it did not end in time.
        public let status: Int32?
        /// Whether it exited (as opposed to being killed by a signal).
        public let exited: Bool
        public let stdout: String
        public let stderr: String
    }

    /// Runs `executable` to completion and returns what it left.
    public static func run(
        executable: String, _ arguments: [String], outputDirectory: String? = nil, environment: [String: String] = [:],
        timeout: Duration = .seconds(60)
    ) async throws -> Outcome {
        let child = try ChildProcess(
            executable: executable, arguments, outputDirectory: outputDirectory, environment: environment)
        let status = await child.waitForExit(timeout: timeout)
        return Outcome(status: status, exited: status != nil && child.exited, stdout: child.stdout, stderr: child.stderr)
    }
}
