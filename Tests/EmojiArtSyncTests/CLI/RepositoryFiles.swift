import Foundation
import TestSupport

/// Paths in this repository (the Makefile, the man pages), found from this source file's location.
enum RepositoryFiles {
    static var root: String {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .path
    }

    /// The directory the tests' built binaries are in (`make install BUILD_DIR=...`).
    static var buildDirectory: String {
        URL(fileURLWithPath: AgentProcess.binary).deletingLastPathComponent().path
    }

    /// The first executable named `name` on PATH, or nil.
    static func tool(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs a program to completion; returns its status and its stdout and stderr together.
    static func run(_ executable: String, _ arguments: [String], directory: String = root) throws -> (status: Int32, output: String) {
        let outcome = try ChildProcess.runBlocking(executable: executable, arguments, mergingStandardError: true, directory: directory)
        return (outcome.status ?? -1, outcome.stdout)
    }
}
