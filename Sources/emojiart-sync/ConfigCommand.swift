import ArgumentParser
import EmojiArtSync
import FoundationEssentials

/// `emojiart-sync config [options]`: the settings a sync run with these options would use, each with where it
/// came from (flag, environment, file or default), in the config file's own `key = value` form.
struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Show the effective settings of a run with these options, and where each came from.",
        discussion: """
            Takes the options of a sync run. Each setting comes from the first of: its flag, its environment \
            variable (EMOJIART_SYNC_ and the option's name, e.g. EMOJIART_SYNC_MAX_DELETE), the config file \
            ($XDG_CONFIG_HOME/emojiart-sync/config, default ~/.config/emojiart-sync/config), its default. \
            Exits 64 when the settings could not be used for a run (the problem is on stderr).
            """
    )

    @OptionGroup var options: RunOptions

    func run() async throws {
        let resolver: SettingsResolver
        do {
            resolver = try await SettingsResolver(flags: options.given)
        } catch let error as SettingsError {
            throw error.usageExit()
        }
        print("# config file: \(resolver.configFile)\(resolver.configFileExists ? "" : " (missing)")")
        let resolved: [(RunSetting, SettingsResolver.Resolved)]
        do {
            resolved = try resolver.resolveAll()
        } catch {
            printError("emojiart-sync: \(error)")
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        let rows = resolved.map { setting, resolved -> (String, String) in
            let source: String
            switch resolved.source {
            case .flag: source = "flag \(resolved.origin)"
            case .environment: source = "environment \(resolved.origin)"
            case .file: source = "file \(resolved.origin)"
            case .default: source = resolved.value == nil ? "not set" : "default"
            }
            let shown: String
            if let value = resolved.value {
                shown = "\(setting.rawValue) = \(value)"
            } else {
                // Unset: shown commented out, as the file would leave it (log-file then follows DIR).
                shown = "# \(setting.rawValue) =" + (setting == .logFile ? " DIR/.emojiart-sync/sync.log" : "")
            }
            return (shown, source)
        }
        let width = rows.map(\.0.count).max() ?? 0
        for (line, source) in rows {
            print(PlainText.padded(line, to: width + 2) + "# " + source)
        }
        do {
            _ = try RunSettings(resolver)
        } catch {
            printError("emojiart-sync: \(error)")
            throw ExitCode(ExitStatus.usage.rawValue)
        }
    }
}
