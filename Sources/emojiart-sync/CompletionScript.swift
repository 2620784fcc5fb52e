import ArgumentParser
import FoundationEssentials

/// The shell completion scripts (`--generate-completion-script bash|zsh|fish`): ArgumentParser's, generated from
/// `CompletionTree`, with `help <TAB>` offering the subcommands. ArgumentParser gives every command tree a `help`
/// subcommand of its own whose argument completes nothing, and no way to give it a completion; so each script gets
/// one added after the generated one it replaces (bash and zsh keep a function's last definition, fish adds every
/// `complete` line). Tests/EmojiArtSyncTests/CLI/CompletionScriptTests.swift runs the bash one.
enum CompletionScript {
    /// The script for `shell`, or nil for a shell ArgumentParser does not know (its own error then says which).
    static func text(forShellNamed name: String) -> String? {
        guard let shell = CompletionShell(rawValue: name) else { return nil }
        let generated = CompletionTree.completionScript(for: shell)
        switch shell {
        case .bash: return generated + "\n" + bashHelp
        case .zsh: return insertingBeforeEntryPoint(zshHelp, into: generated)
        case .fish: return generated + "\n" + fishHelp
        default: return generated
        }
    }

    /// The subcommands' names, space-separated: what `help` takes.
    private static var topics: String {
        ControlCommand.subcommands.compactMap { $0.configuration.commandName }.joined(separator: " ")
    }

    /// Modelled on the generated function of a subcommand with one positional argument (`purge`'s).
    private static var bashHelp: String {
        """
        # help: its one argument is a subcommand's name.
        _emojiart-sync_help() {
            repeating_flags=()
            non_repeating_flags=(--version)
            repeating_options=()
            non_repeating_options=()
            __emojiart-sync_offer_flags_options 1
            case "${positional_number}" in
            1)
                COMPREPLY+=($(compgen -W '\(topics)' -- "${cur}"))
                ;;
            esac
        }

        """
    }

    private static var zshHelp: String {
        let quoted = topics.split(separator: " ").map { "'\($0)'" }.joined(separator: " ")
        return """
            # help: its one argument is a subcommand's name.
            _emojiart-sync_help() {
                local -i ret=1
                local -ar _subcommand=(\(quoted))
                local -ar arg_specs=(
                    ':subcommand:{__emojiart-sync_complete "${_subcommand[@]}"}'
                    '--version[Show the version.]'
                )
                _arguments -w -s -S : "${arg_specs[@]}" && ret=0

                return "${ret}"
            }


            """
    }

    private static var fishHelp: String {
        """
        # help: its one argument is a subcommand's name.
        complete -c 'emojiart-sync' -n '__emojiart-sync_should_offer_completions_for_positional "emojiart-sync help" -eq 1' -fka '\(topics)'

        """
    }

    /// zsh runs an autoloaded completion file as the function `_emojiart-sync`, which defines the helpers and then
    /// completes: a helper defined after that call would be seen only from the second completion on.
    private static func insertingBeforeEntryPoint(_ function: String, into script: String) -> String {
        guard let entry = script.firstRange(of: "\nif [[ \"${funcstack[1]}\" = _emojiart-sync ]]") else {
            return script + "\n" + function
        }
        return script[..<entry.lowerBound] + "\n" + function + script[entry.lowerBound...]
    }
}
