import Foundation
import Testing

/// The shell completion scripts the binary generates name every option its `--help` lists, the subcommands,
/// and the values a person can complete.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct CompletionScriptTests {
    @Test(arguments: ["bash", "zsh", "fish"])
    func theScriptCoversEveryOptionOfEveryCommand(shell: String) async throws {
        let out = TemporaryDirectory("completion")
        let script = try await AgentProcess.run(["--generate-completion-script", shell], outputDirectory: out.path)
        #expect(script.status == 0, "\(script.stderr)")
        #expect(script.stdout.count > 500, "a real script: \(script.stdout)")
        for command in HelpText.commands {
            for option in try await HelpText.longOptions(command, outputDirectory: out.path) {
                // fish names a long option as `-l 'dir'`; bash and zsh spell it out.
                let spelled = shell == "fish" ? "-l '\(option.dropFirst(2))'" : option
                #expect(script.stdout.contains(spelled), "\(shell): \(command) \(option) missing")
            }
        }
        for word in ["status", "purge", "config", "memory", "disk", "structure", "full", "logfmt", "json", "warning", "critical"] {
            #expect(script.stdout.contains(word), "\(shell): \(word) missing")
        }
    }
}
