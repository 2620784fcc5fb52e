import Foundation

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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
