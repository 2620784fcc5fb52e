import Foundation
import TestSupport
import Testing

/// The shell completion scripts the binary generates name every option and subcommand its `--help` lists,
/// and the values a person can complete.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct CompletionScriptTests {
    @Test(arguments: ["bash", "zsh", "fish"])
    func theScriptCoversEveryOptionOfEveryCommand(shell: String) async throws {
        let out = TemporaryDirectory("completion")
        let script = try await AgentProcess.run(["--generate-completion-script", shell], outputDirectory: out.path)
        #expect(script.status == 0, "\(script.stderr)")
        #expect(script.stdout.count > 500, "a real script: \(script.stdout)")
        for command in try await HelpText.commands(outputDirectory: out.path) {
            for option in try await HelpText.longOptions(command, outputDirectory: out.path) {
                // fish names a long option as `-l 'dir'`; bash and zsh spell it out.
                let spelled = shell == "fish" ? "-l '\(option.dropFirst(2))'" : option
                #expect(script.stdout.contains(spelled), "\(shell): \(command) \(option) missing")
            }
        }
        // Every subcommand --help lists (scrub was missing: the completions had a list of their own).
        let subcommands = try await HelpText.subcommands(outputDirectory: out.path)
        #expect(subcommands.contains("scrub"), "\(subcommands)")
        for subcommand in subcommands {
            // Spelled as each shell's script offers a subcommand (a bare `scrub` is also in `--scrub-interval`).
            let offered = ["bash": "_emojiart-sync_\(subcommand)()", "zsh": "'\(subcommand):", "fish": "-fa '\(subcommand)'"][shell] ?? ""
            #expect(script.stdout.contains(offered), "\(shell): subcommand \(subcommand) missing (\(offered))")
        }
        for word in ["memory", "disk", "structure", "full", "logfmt", "json", "warning", "critical"] {
            #expect(script.stdout.contains(word), "\(shell): \(word) missing")
        }
    }
}
