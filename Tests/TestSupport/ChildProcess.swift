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
    /// stderr instead of a new file there; `mergingStandardError` sends stderr to the stdout file, in the order
    /// written. `directory`: its working directory (the test's when nil).
    public init(
        executable: String, _ arguments: [String], outputDirectory: String? = nil, environment: [String: String] = [:],
        stderrPath: String? = nil, mergingStandardError: Bool = false, directory: String? = nil
    ) throws {
        scratch = outputDirectory == nil ? TemporaryDirectory("child") : nil
        let outputs = outputDirectory ?? scratch!.path
        stdoutPath = outputs + "/child-\(UUID().uuidString).out"
        self.stderrPath = stderrPath ?? outputs + "/child-\(UUID().uuidString).err"
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        if !FileManager.default.fileExists(atPath: self.stderrPath) {
            _ = FileManager.default.createFile(atPath: self.stderrPath, contents: nil)
        }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
        process.standardOutput = output
        process.standardError = mergingStandardError ? output : try FileHandle(forWritingTo: URL(fileURLWithPath: self.stderrPath))
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

    /// Runs `executable` to completion, blocking the calling thread (for a synchronous caller: a setup step, a
    /// tool such as `mount` or `make`); throws when it cannot be started.
    public static func runBlocking(
        executable: String, _ arguments: [String], mergingStandardError: Bool = false, directory: String? = nil
    ) throws -> Outcome {
        let child = try ChildProcess(
            executable: executable, arguments, mergingStandardError: mergingStandardError, directory: directory)
        child.process.waitUntilExit()
        return Outcome(
            status: child.process.terminationStatus, exited: child.exited, stdout: child.stdout, stderr: child.stderr)
    }

    /// Runs `executable` to completion and returns what it left.
    public static func run(
        executable: String, _ arguments: [String], outputDirectory: String? = nil, environment: [String: String] = [:],
        mergingStandardError: Bool = false, timeout: Duration = .seconds(60)
    ) async throws -> Outcome {
        let child = try ChildProcess(
            executable: executable, arguments, outputDirectory: outputDirectory, environment: environment,
            mergingStandardError: mergingStandardError)
        let status = await child.waitForExit(timeout: timeout)
        return Outcome(status: status, exited: status != nil && child.exited, stdout: child.stdout, stderr: child.stderr)
    }
}
