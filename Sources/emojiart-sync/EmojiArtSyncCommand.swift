import ArgumentParser
import EmojiArtSync

/// The command-line front end. `emojiart-sync status|purge|config ...` are subcommands; anything else is a
/// sync run. They are two parsers because a run's options (`--dir`, ...) would otherwise swallow the
/// subcommands' options of the same name. Completion scripts describe both as one tree (`CompletionTree`).
@main
enum Main {
    static func main() async {
        let arguments = CommandLine.arguments.dropFirst()
        if arguments.contains("--generate-completion-script") {
            await CompletionTree.main()
        } else if let first = arguments.first, ControlCommand.names.contains(first) {
            await ControlCommand.main()
        } else {
            await EmojiArtSyncCommand.main()
        }
    }
}

/// `emojiart-sync --dir DIR ...`: a sync run (the agent, or one pass with `--once`).
struct EmojiArtSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emojiart-sync",
        abstract: "Keep a directory in sync with an EmojiArt gallery.",
        usage: """
            emojiart-sync --dir <dir> [--server <url>] [--once] [<options>]
            emojiart-sync status --dir <dir> [--json | --watch]
            emojiart-sync purge memory|disk --dir <dir>
            emojiart-sync scrub --dir <dir>
            emojiart-sync config [<options>]
            """,
        discussion: """
            Mirrors the gallery's feed (GET /gallery/images) into DIR, one PNG per asset URL, named by the \
            book's mapping (/gallery/image?3 -> gallery_image_3.png). Assets come from memory, then disk \
            (trusted by its recorded stat fingerprint, else verified against the index's SHA-256), then the network (accepted only if the bytes are a \
            valid PNG). The agent's own state lives in DIR/.emojiart-sync/; files it did not write are never \
            modified, moved or deleted. Without --once it keeps running: it watches DIR with inotify and \
            repairs its files at once, polls the feed every --interval seconds, and answers signals. With \
            --once on a terminal, a progress line and a summary are drawn on stderr instead of the log lines.

            SETTINGS
              Each option can also be set in the environment (EMOJIART_SYNC_ and its name: \
            EMOJIART_SYNC_DIR, EMOJIART_SYNC_MAX_DELETE, ...) or in $XDG_CONFIG_HOME/emojiart-sync/config \
            (default ~/.config/emojiart-sync/config; key = value lines, e.g. interval = 30). A flag wins \
            over the environment, which wins over the file. 'emojiart-sync config' shows the result.

            HTTPS AND PROXIES
              An https gallery is verified against the system's CAs, or --ca-cert FILE. Redirects are \
            followed on the same host only (http to https included, at most 5). Proxies come from https_proxy, \
            http_proxy, all_proxy and no_proxy, as libcurl reads them; a failing proxy is named as the proxy.

            SIGNALS
              SIGUSR1  purge the memory cache
              SIGUSR2  purge the disk cache (the agent's own files only), then fetch everything again
              SIGHUP   re-read the feed, rescan DIR, reopen the log file
              SIGTERM, SIGINT  stop gracefully (exit 0); a second one exits at once
              A --once run answers SIGUSR1, refuses SIGUSR2 (no disk purge in a one-shot run), reopens the \
            log on SIGHUP, and on SIGTERM/SIGINT cleans up and exits 143/130.

            EXIT STATUS
              0   --once: every asset in the feed is on disk and valid; agent: stopped on request
              1   fatal: gallery unreachable (--once), feed unreadable, DIR unusable or gone
              2   --once: partial, some assets could not be had (their keys are in the log and on stderr)
              3   another agent already runs on DIR
              130, 143  --once: interrupted by SIGINT/SIGTERM (DIR is partial)
              64  usage error
            """,
        version: EmojiArtSyncVersion.current
    )

    @OptionGroup var options: RunOptions

    func run() async throws {
        try await RunCommand.run(options)
    }
}

/// `emojiart-sync status|purge ...`: commands that talk to the agent running on a directory.
struct ControlCommand: AsyncParsableCommand {
    static let names: Set<String> = ["status", "purge", "scrub", "config"]

    static let configuration = CommandConfiguration(
        commandName: "emojiart-sync",
        abstract: "Talk to the agent running on a directory.",
        version: EmojiArtSyncVersion.current,
        subcommands: [StatusCommand.self, PurgeCommand.self, ScrubCommand.self, ConfigCommand.self]
    )
}

/// The whole command line as one tree, a sync run's options plus the subcommands, used only to generate
/// shell completion scripts (`--generate-completion-script bash|zsh|fish`): neither parser of `Main` alone
/// describes everything a person can type.
struct CompletionTree: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emojiart-sync",
        version: EmojiArtSyncVersion.current,
        subcommands: [StatusCommand.self, PurgeCommand.self, ConfigCommand.self]
    )

    @OptionGroup var options: RunOptions
}
