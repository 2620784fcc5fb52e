import ArgumentParser
import EmojiArtSync

/// `--dir DIR` of the commands that work on a synced directory (`status`, `purge`, `scrub`). DIR is found
/// exactly as a sync run finds it, by the same function (`RunSettings.directory`): the flag, then
/// `EMOJIART_SYNC_DIR`, then `dir = ...` in the config file, expanded as a shell would.
struct DirectoryOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The synced directory (default: as for a run, EMOJIART_SYNC_DIR or dir in the config file).", valueName: "dir"), completion: .directory)
    var dir: String?

    /// The directory; a usage error (exit 64) when it is given nowhere or cannot be expanded.
    func resolve() async throws -> SyncDirectory {
        do {
            let resolver = try await SettingsResolver(flags: dir.map { [.dir: $0] } ?? [:])
            return SyncDirectory(try RunSettings.directory(resolver))
        } catch let error as SettingsError {
            throw ValidationError(error.description)
        }
    }
}
