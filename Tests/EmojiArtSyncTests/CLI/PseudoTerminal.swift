import Foundation
import TestSupport
import Testing

/// Runs the built binary on a pseudo-terminal, as when a person runs it in a terminal, through util-linux's
/// `script(1)`, and collects what it drew there (the terminal turns each `\n` into `\r\n`).
enum PseudoTerminal {
    static func run(_ arguments: [String], outputDirectory: String) async throws -> (status: Int32?, terminal: String) {
        let script = try #require(RepositoryFiles.tool("script"), "script(1) (util-linux) is not installed")
        let command = ([AgentProcess.binary] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }
            .joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: script)
        process.arguments = ["--quiet", "--return", "--command", command, "/dev/null"]
        let outputPath = outputDirectory + "/terminal-\(UUID().uuidString)"
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        try process.run()
        _ = await eventually(timeout: .seconds(60)) { !process.isRunning }
        let status: Int32? = process.isRunning ? nil : process.terminationStatus
        if process.isRunning { process.terminate() }
        return (status, (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "")
    }
}
