import Foundation
import TestSupport

/// What the built binary's `--help` says, read the way a person reads it.
enum HelpText {
    /// A section of a help text: the lines after `NAME:` up to the next section's header (a line in capitals
    /// ending in `:`, not indented).
    static func section(_ name: String, of help: String) -> [Substring]? {
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0 == name + ":" || $0.hasPrefix(name + ": ") }) else { return nil }
        let rest = lines[(start + 1)...]
        let end = rest.firstIndex { line in
            line.first.map { $0.isUppercase } == true && line.contains(":")
                && line.prefix { $0 != ":" }.allSatisfy { $0.isUppercase || $0 == " " }
        } ?? rest.endIndex
        return Array(rest[..<end])
    }

    /// The subcommands the run's `--help` lists under SUBCOMMANDS, one a line (`help` excluded).
    static func subcommands(outputDirectory: String) async throws -> [String] {
        let help = try await AgentProcess.run(["--help"], outputDirectory: outputDirectory)
        guard help.status == 0, let lines = section("SUBCOMMANDS", of: help.stdout) else {
            throw TestFailure("--help: status \(String(describing: help.status)), no SUBCOMMANDS section:\n\(help.stdout)")
        }
        return lines.compactMap { $0.split(separator: " ").first.map(String.init) }.filter { $0 != "help" }
    }

    /// The commands whose `--help` lists options: a sync run and each subcommand `--help` names.
    static func commands(outputDirectory: String) async throws -> [[String]] {
        [[]] + (try await subcommands(outputDirectory: outputDirectory)).map { [$0] }
    }

    /// The long options (`--dir`, `--log-level`, ...) the OPTIONS section of `arguments + --help` lists.
    static func longOptions(_ arguments: [String], outputDirectory: String) async throws -> Set<String> {
        let help = try await AgentProcess.run(arguments + ["--help"], outputDirectory: outputDirectory)
        guard help.status == 0, let section = section("OPTIONS", of: help.stdout) else {
            throw TestFailure("\(arguments) --help: status \(String(describing: help.status)), no OPTIONS section:\n\(help.stdout)")
        }
        let options = section.compactMap { line -> String? in
            // An option's own line starts with it (after `-q, `); wrapped help text is indented further.
            let trimmed = line.drop { $0 == " " }
            guard line.count - trimmed.count <= 2 else { return nil }
            return trimmed.split(separator: " ").map(String.init).first { $0.hasPrefix("--") }
                .map { String($0.prefix { $0 != "," && $0 != "=" }) }
        }
        if options.isEmpty { throw TestFailure("no options parsed from \(arguments) --help") }
        return Set(options)
    }
}
