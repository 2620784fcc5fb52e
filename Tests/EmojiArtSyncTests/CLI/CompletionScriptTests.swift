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

    /// `help <TAB>` completed nothing: ArgumentParser's own `help` takes any word and offers none. bash, completing
    /// from the generated script as bash-completion would call it, now offers the subcommands.
    @Test(.enabled(if: RepositoryFiles.tool("bash") != nil, "bash is not installed"))
    func bashCompletesTheSubcommandsAfterHelp() async throws {
        let out = TemporaryDirectory("completion-help")
        let script = try await AgentProcess.run(["--generate-completion-script", "bash"], outputDirectory: out.path)
        try script.stdout.write(toFile: out.file("emojiart-sync.bash"), atomically: true, encoding: .utf8)
        let subcommands = try await HelpText.subcommands(outputDirectory: out.path)
        // What bash sets before calling a completion function (`complete -F`), then what it offered.
        let driver = """
            shopt -s extglob
            source "$1"
            COMP_LINE="$2"; COMP_POINT=${#COMP_LINE}
            read -ra COMP_WORDS <<< "$COMP_LINE"; [[ "$COMP_LINE" == *' ' ]] && COMP_WORDS+=('')
            COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
            _emojiart-sync emojiart-sync "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        for (line, expected) in [("emojiart-sync help ", subcommands), ("emojiart-sync help pu", ["purge"])] {
            let bash = try #require(RepositoryFiles.tool("bash"))
            let run = try RepositoryFiles.run(bash, ["--norc", "-c", driver, "drive", out.file("emojiart-sync.bash"), line])
            let offered = run.output.split(separator: "\n").map(String.init)
            #expect(Set(offered) == Set(expected), "[\(line)] offered \(offered): \(run.output)")
        }
    }

    /// zsh and fish get the same: the subcommands as `help`'s one argument (zsh's before the line that runs the
    /// completion on the file's first load).
    @Test func zshAndFishCompleteTheSubcommandsAfterHelp() async throws {
        let out = TemporaryDirectory("completion-help")
        let names = try await HelpText.subcommands(outputDirectory: out.path)
        let zsh = try await AgentProcess.run(["--generate-completion-script", "zsh"], outputDirectory: out.path).stdout
        let offered = "local -ar _subcommand=(" + names.map { "'\($0)'" }.joined(separator: " ") + ")"
        let help = try #require(zsh.range(of: offered), "\(zsh)")
        let entry = try #require(zsh.range(of: "if [[ \"${funcstack[1]}\" = _emojiart-sync ]]"))
        #expect(help.upperBound < entry.lowerBound)
        let fish = try await AgentProcess.run(["--generate-completion-script=fish"], outputDirectory: out.path).stdout
        #expect(fish.contains("\"emojiart-sync help\" -eq 1' -fka '\(names.joined(separator: " "))'"), "\(fish)")
    }
}
