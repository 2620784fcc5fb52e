import EmojiArtSync
import ArgumentParser
import FoundationEssentials

/// `emojiart-sync --help` (also `-h` and `help`): what a person needs first comes first, one screen of usage,
/// the subcommands one line each and the options, then the details (how a sync works, settings, signals, exit
/// status) that ArgumentParser would otherwise print above the usage as the overview's discussion.
enum RunHelp {
    /// Whether `arguments` ask for a run's help: `--help` or `-h` before any `--`, or `help` alone.
    static func isRequested(_ arguments: [String]) -> Bool {
        let options = arguments.prefix { $0 != "--" }
        return options.contains("--help") || options.contains("-h") || arguments == ["help"]
    }

    /// The help text: ArgumentParser's overview, usage and options, with the subcommands (from
    /// `ControlCommand.subcommands`) before the options and `details` after them.
    static func text(columns: Int? = nil) -> String {
        let generated = EmojiArtSyncCommand.helpMessage(columns: columns)
        let names = ControlCommand.subcommands.map { $0.configuration.commandName ?? "" }
        let width = (names + ["help <subcommand>"]).map(\.count).max() ?? 0
        let lines = zip(names, ControlCommand.subcommands).map { name, command in
            "  " + PlainText.padded(name, to: width + 2) + command.configuration.abstract
        } + ["  " + PlainText.padded("help <subcommand>", to: width + 2) + "Show a subcommand's options (also: <subcommand> --help)."]
        let subcommands = "SUBCOMMANDS:\n" + lines.joined(separator: "\n") + "\n\n"
        guard let options = generated.firstRange(of: "OPTIONS:") else { return generated + "\n" + subcommands + details }
        return generated[..<options.lowerBound] + subcommands + generated[options.lowerBound...]
            .trimmingSuffix("\n") + "\n\n" + details
    }

    /// How a sync works, where settings come from, the signals, the exit status. Kept to 100 columns.
    static let details = """
        DESCRIPTION:
          Mirrors the gallery's feed (GET /gallery/images) into DIR, one PNG per asset URL, named by the
          book's mapping (/gallery/image?3 -> gallery_image_3.png). Assets come from memory, then disk
          (trusted by its recorded stat fingerprint, else verified against the index's SHA-256), then the
          network (accepted only if the bytes are a valid PNG). The agent's own state lives in
          DIR/.emojiart-sync/; files it did not write are never modified, moved or deleted. Without --once it
          keeps running: it watches DIR with inotify and repairs its files at once, polls the feed every
          --interval, and answers signals. With --once on a terminal, a progress line and a summary are
          drawn on stderr instead of the log lines. --once --dry-run prints what the run would do, one
          line per decision (would-fetch, would-replace, would-adopt, would-refresh, would-remove,
          would-keep, would-conflict, would-refuse NAME key=...) and a line of counts, fetching the feed
          but no image and writing nothing in DIR; it exits as the run would as far as that shows.

        SETTINGS:
          Each option can also be set in the environment (EMOJIART_SYNC_ and its name: EMOJIART_SYNC_DIR,
          EMOJIART_SYNC_MAX_DELETE, ...) or in $XDG_CONFIG_HOME/emojiart-sync/config (default
          ~/.config/emojiart-sync/config; key = value lines, e.g. interval = 5m). A flag wins over the
          environment, which wins over the file; 'emojiart-sync config' shows the result. status, purge and
          scrub find DIR the same way. Paths (dir, log-file) from the environment or the file are expanded
          as a shell would: ~, ~user, $HOME, ${XDG_DATA_HOME}. Durations: 90s, 5m, 1h30m, 2d.

        LOG:
          DIR/.emojiart-sync/sync.log (--log-file; none writes no file), also on stderr unless --quiet: one
          line per asset per pass (hit=memory|disk|network key=...; the feed's repeat listings are counted,
          not written), one event=pass summary per pass, a failure on record written once. Rotated at
          --log-max-size (16M), --log-keep (5) old files kept; a symlinked path is written through, never
          rotated. Every event= value is in the man page (LOG EVENTS).

        HTTPS AND PROXIES:
          An https gallery is verified against the system's CAs, or --ca-cert FILE. Redirects are followed
          on the same host only (http to https included, at most 5). Proxies come from https_proxy,
          http_proxy, all_proxy and no_proxy, as libcurl reads them; a failing proxy is named as the proxy.

        SIGNALS:
          SIGUSR1          purge the memory cache
          SIGUSR2          purge the disk cache (the agent's own files only), then fetch everything again
          SIGHUP           re-read the feed, rescan DIR, reopen the log file
          SIGTERM, SIGINT  stop gracefully (exit 0); a second one exits at once
          A --once run answers SIGUSR1, refuses SIGUSR2 (no disk purge in a one-shot run), reopens the log
          on SIGHUP, and on SIGTERM/SIGINT cleans up and exits 143/130.

        EXIT STATUS:
          0         --once: every asset in the feed is on disk and valid; agent: stopped on request
          1         fatal: gallery unreachable (--once), feed unreadable, DIR unusable or gone
          2         --once: partial, some assets could not be had (their keys are in the log and on stderr)
          3         another agent already runs on DIR
          130, 143  --once: interrupted by SIGINT/SIGTERM (DIR is partial)
          64        usage error
        """
}

private extension Substring {
    func trimmingSuffix(_ suffix: Character) -> Substring {
        var text = self
        while text.last == suffix { text = text.dropLast() }
        return text
    }
}
