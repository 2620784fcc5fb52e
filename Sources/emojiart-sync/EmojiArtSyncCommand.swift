import ArgumentParser
import EmojiArtSync
import FoundationEssentials
import Glibc

/// The command-line front end. `emojiart-sync status|purge|config ...` are subcommands; anything else is a
/// sync run. They are two parsers because a run's options (`--dir`, ...) would otherwise swallow the
/// subcommands' options of the same name. Completion scripts describe both as one tree (`CompletionTree`).
@main
enum Main {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let flag = arguments.firstIndex(where: { $0.hasPrefix("--generate-completion-script") }) {
            // `--generate-completion-script bash` or `=bash`; anything else is ArgumentParser's to refuse.
            let attached = arguments[flag].split(separator: "=", maxSplits: 1).dropFirst().first.map(String.init)
            let shell = attached ?? (flag + 1 < arguments.count ? arguments[flag + 1] : "")
            if arguments.count == (attached == nil ? 2 : 1), let script = CompletionScript.text(forShellNamed: shell) {
                print(script, terminator: script.hasSuffix("\n") ? "" : "\n")
            } else {
                await CompletionTree.main()
            }
        } else if let first = arguments.first, ControlCommand.names.contains(first) {
            await ControlCommand.main()
        } else if arguments.first == "help", arguments.count > 1 {
            // `help status` is `status --help`: ArgumentParser's help subcommand of the subcommands' parser.
            guard ControlCommand.names.contains(arguments[1]) else {
                let known = ControlCommand.subcommands.compactMap { $0.configuration.commandName }
                printError("emojiart-sync: no subcommand '\(arguments[1])'; subcommands: \(known.joined(separator: ", "))")
                exit(ExitStatus.usage.rawValue)
            }
            await ControlCommand.main()
        } else if RunHelp.isRequested(arguments) {
            print(RunHelp.text())
        } else {
            await EmojiArtSyncCommand.main()
        }
    }
}

/// `emojiart-sync --dir DIR ...`: a sync run (the agent, or one pass with `--once`). Its `--help` is
/// `RunHelp`'s: usage, subcommands and options first, the details after them.
struct EmojiArtSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emojiart-sync",
        abstract: "Keep a directory in sync with an EmojiArt gallery.",
        usage: """
            emojiart-sync [--dir <dir>] [--server <url>] [--once] [<options>]
            emojiart-sync <subcommand> [--dir <dir>] [<options>]
            """,
        version: EmojiArtSyncVersion.description(program: "emojiart-sync")
    )

    @OptionGroup var options: RunOptions

    func run() async throws {
        try await RunCommand.run(options)
    }
}

/// `emojiart-sync status|purge|scrub|config ...`: the subcommands, which work on a synced directory or on
/// the settings rather than run a sync.
struct ControlCommand: AsyncParsableCommand {
    /// Every subcommand, in the order `--help` lists them: the one list the dispatch in `Main`, the run's
    /// help and the completion scripts are made from.
    static let subcommands: [any ParsableCommand.Type] = [
        StatusCommand.self, PurgeCommand.self, ScrubCommand.self, ConfigCommand.self,
    ]

    static var names: Set<String> { Set(subcommands.compactMap { $0.configuration.commandName }) }

    static let configuration = CommandConfiguration(
        commandName: "emojiart-sync",
        abstract: "Talk to the agent running on a directory.",
        version: EmojiArtSyncVersion.description(program: "emojiart-sync"),
        subcommands: subcommands
    )
}

/// The whole command line as one tree, a sync run's options plus the subcommands, used only to generate
/// shell completion scripts (`--generate-completion-script bash|zsh|fish`): neither parser of `Main` alone
/// describes everything a person can type.
struct CompletionTree: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emojiart-sync",
        version: EmojiArtSyncVersion.current,
        subcommands: ControlCommand.subcommands
    )

    @OptionGroup var options: RunOptions
}
