import ArgumentParser
import EmojiArtSync
import FoundationEssentials
import Glibc

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
            throw error.usageExit()
        }
    }

    /// The directory, which must be one an agent has synced (it holds `.emojiart-sync/`): `status`, `purge` and
    /// `scrub` never create one, so a mistyped DIR is an error (exit 1) that leaves nothing behind.
    func resolveSynced() async throws -> SyncDirectory {
        let directory = try await resolve()
        let problem: String? =
            switch (Self.isDirectory(directory.root), Self.isDirectory(directory.stateDirectory)) {
            case (nil, _): "no such directory"
            case (false?, _): "not a directory"
            case (_, nil), (_, false?): "no agent has synced it (it has no \(SyncDirectory.stateDirectoryName)/)"
            case (true?, true?): nil
            }
        if let problem {
            printError("emojiart-sync: \(directory.root): \(problem)")
            throw ExitCode(ExitStatus.fatal.rawValue)
        }
        return directory
    }

    /// Whether `path` (followed if a symbolic link) is a directory; nil when nothing is there or it cannot be
    /// looked at (`stat(2)`).
    private static func isDirectory(_ path: String) -> Bool? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mode & S_IFMT == S_IFDIR
    }
}
