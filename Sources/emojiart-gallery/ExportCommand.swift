import ArgumentParser
import EmojiArtGallery
import FoundationEssentials

/// `emojiart-gallery export`: writes the gallery as static files for a stock web server.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the gallery as static files (feed and images) for a stock web server.",
        discussion: """
            Writes DIR/gallery/images (the feed JSON, each item three times, shuffled once) and \
            DIR/gallery/image/N.png for N = 1...count; error items (N % 10 == 0) hold \
            {"error": "File not found."}. Feed urls are BASE/gallery/image/N.png. Serve DIR as the \
            document root, e.g. with nginx. --count N (default 29) sets the number of items, as \
            for the server. See emojiart-gallery(1).
            """
    )

    @Option(help: ArgumentHelp("Output directory (created if missing).", valueName: "dir"))
    var dir: String

    /// `--count` and `--small` are the server's options, read from there: ArgumentParser gives an option the
    /// two commands share to the parent, wherever it appears on the command line.
    @ParentCommand var gallery: GalleryCommand

    @Option(
        name: .customLong("base-url"),
        help: ArgumentHelp("Prefix of every image url in the feed (default: none, root-relative paths).", valueName: "url"))
    var baseURL = ""

    func validate() throws {
        guard !dir.isEmpty else { throw ValidationError("--dir must not be empty") }
    }

    func run() async throws {
        let count = gallery.count
        let export = GalleryExport(count: count, small: gallery.small, baseURL: baseURL)
        let start = ContinuousClock.now
        let files = try await export.write(to: dir)
        let elapsed = ContinuousClock.now - start
        GalleryCommand.logLine("event=exported dir=\(dir) count=\(count) small=\(gallery.small) files=\(files) seconds=\(elapsed.components.seconds)")
    }
}
