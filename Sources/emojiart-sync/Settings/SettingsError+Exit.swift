import ArgumentParser
import EmojiArtSync

extension SettingsError {
    /// Says the error on stderr and gives the usage error's exit status (64), without the usage text
    /// ArgumentParser prints after a `ValidationError`: the message names the value and where it came from (a
    /// file, a variable, a flag), which a list of options does not explain.
    func usageExit() -> ExitCode {
        printError("emojiart-sync: \(description)")
        return ExitCode(ExitStatus.usage.rawValue)
    }
}
