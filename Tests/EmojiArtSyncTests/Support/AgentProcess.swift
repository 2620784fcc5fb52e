import TestSupport

/// The built `emojiart-sync` binary, run as a child process the way a user runs it (`ChildProcess`).
typealias AgentProcess = ChildProcess

extension ChildProcess {
    /// The `emojiart-sync` of this build.
    static var binary: String { builtProduct("emojiart-sync") }

    /// Starts the agent with `arguments` (see `ChildProcess.init`).
    convenience init(
        _ arguments: [String], outputDirectory: String, environment: [String: String] = [:], stderrPath: String? = nil
    ) throws {
        try self.init(
            executable: Self.binary, arguments, outputDirectory: outputDirectory, environment: environment,
            stderrPath: stderrPath)
    }

    /// Runs the agent to completion and returns the exit status and output.
    static func run(
        _ arguments: [String], outputDirectory: String, environment: [String: String] = [:], timeout: Duration = .seconds(60)
    ) async throws -> (status: Int32?, stdout: String, stderr: String) {
        let outcome = try await run(
            executable: binary, arguments, outputDirectory: outputDirectory, environment: environment, timeout: timeout)
        return (outcome.status, outcome.stdout, outcome.stderr)
    }
}
