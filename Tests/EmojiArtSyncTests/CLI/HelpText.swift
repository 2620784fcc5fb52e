import Foundation

/// What the built binary's `--help` says, read the way a person reads it.
enum HelpText {
    /// The commands whose `--help` lists options: a sync run and each subcommand.
    static let commands: [[String]] = [[], ["status"], ["purge"], ["config"]]

    /// The long options (`--dir`, `--log-level`, ...) the OPTIONS section of `arguments + --help` lists.
    static func longOptions(_ arguments: [String], outputDirectory: String) async throws -> Set<String> {
        let help = try await AgentProcess.run(arguments + ["--help"], outputDirectory: outputDirectory)
        guard help.status == 0, let section = help.stdout.range(of: "OPTIONS:") else {
            throw TestFailure("\(arguments) --help: status \(String(describing: help.status)), no OPTIONS section:\n\(help.stdout)")
        }
        let options = help.stdout[section.upperBound...].split(separator: "\n").compactMap { line -> String? in
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
