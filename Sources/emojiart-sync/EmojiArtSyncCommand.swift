import ArgumentParser
import EmojiArtSync

/// `emojiart-sync`: the command-line front end. Parses arguments and hands them to the library.
@main
struct EmojiArtSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emojiart-sync",
        abstract: "Keep a directory in sync with an EmojiArt gallery.",
        discussion: """
            Mirrors the gallery's feed (GET /gallery/images) into DIR, one PNG per asset URL, named by the \
            book's mapping (/gallery/image?3 -> gallery_image_3.png). Assets come from memory, then disk \
            (verified against the manifest's SHA-256), then the network (accepted only if the bytes are a \
            valid PNG). The agent's own state lives in DIR/.emojiart-sync/; files it did not write are never \
            modified, moved or deleted.

            EXIT STATUS
              0   every asset in the feed is on disk and valid
              1   fatal: gallery unreachable, feed unreadable, or DIR unusable
              2   partial: some assets could not be had (their keys are in the log and on stderr)
              3   another agent already runs on DIR
              64  usage error
            """,
        version: EmojiArtSyncVersion.current,
        subcommands: [RunCommand.self],
        defaultSubcommand: RunCommand.self
    )
}
