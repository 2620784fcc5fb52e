import ArgumentParser
import EmojiArtGallery
import FoundationEssentials
import Glibc
import SystemPackage

/// `emojiart-gallery`: runs the Linux stand-in for the book's gallery server until SIGINT or SIGTERM.
///
/// The first line on stdout is the base URL (so a script can start it with `--port 0` and read
/// the port); every request is logged to stderr as one logfmt line. Faults given here are the
/// initial plan; `POST /_control/faults` changes it at runtime.
@main
struct GalleryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emojiart-gallery",
        abstract: "Serve an EmojiArt gallery (the book's protocol, quirks included) with fault injection.",
        discussion: """
            Serves GET /gallery/images (a JSON feed listing each of --count items three times, \
            shuffled) and GET /gallery/image?N (a 360x650 PNG, 16x16 with --small, sent as application/octet-stream \
            with filename="N.tiff"; N % 10 == 0 or unknown N answer 200 with \
            {"error": "File not found."}).

            The first line on stdout is the base URL, e.g. http://127.0.0.1:40123. Requests are \
            logged to stderr in logfmt. SIGINT or SIGTERM stops the server gracefully (exit 0).

            LIST is `all` or comma-separated image numbers, e.g. --corrupt 3,7 --truncate all. \
            A number may appear in one fault option only; a numbered fault wins over `all`.

            Control endpoints (not counted, no latency): GET /_control/stats, \
            POST /_control/faults (a JSON fault plan), POST /_control/reset (zero the counts). \
            `emojiart-gallery export --dir OUT --count N [--small]` writes the gallery as static \
            files instead. See emojiart-gallery(1).
            """,
        subcommands: [ExportCommand.self]
    )

    @Option(help: "Address to bind.")
    var host = "127.0.0.1"

    @Option(help: "TCP port; 0 picks a free port (read it from the first line of stdout).")
    var port = 8080

    @Option(help: "Number of unique items in the feed.")
    var count = 29

    @Option(name: .customLong("latency-ms"), help: ArgumentHelp("Delay before every gallery response.", valueName: "ms"))
    var latencyMilliseconds = 0

    @Option(help: ArgumentHelp("Flip a byte inside IDAT (CRC not fixed).", valueName: "LIST"))
    var corrupt: FaultTargets?

    @Option(help: ArgumentHelp("Send half the body, then close the connection.", valueName: "LIST"))
    var truncate: FaultTargets?

    @Option(name: .customLong("server-error"), help: ArgumentHelp("Answer HTTP 500.", valueName: "LIST"))
    var serverError: FaultTargets?

    @Option(help: ArgumentHelp("Stream garbage forever, until the client hangs up.", valueName: "LIST"))
    var endless: FaultTargets?

    @Option(help: ArgumentHelp("Send a different valid PNG on every request.", valueName: "LIST"))
    var changing: FaultTargets?

    @Option(help: ArgumentHelp("Trickle the body out over --slow-ms.", valueName: "LIST"))
    var slow: FaultTargets?

    @Option(name: .customLong("slow-ms"), help: ArgumentHelp("Duration of a --slow transfer.", valueName: "ms"))
    var slowMilliseconds = 2000

    @Flag(name: .customLong("empty-feed"), help: "Answer the feed with [].")
    var emptyFeed = false

    @Option(name: .customLong("feed-status"), help: ArgumentHelp("Answer the feed with this HTTP status (e.g. 500).", valueName: "code"))
    var feedStatus: Int?

    @Flag(help: "Serve 16x16 images of about 110 bytes instead of 360x650 ones (for galleries of many thousands of items).")
    var small = false

    @Flag(help: "Do not log requests to stderr.")
    var quiet = false

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535, got \(port)") }
        guard (0...100_000).contains(count) else { throw ValidationError("--count must be between 0 and 100000, got \(count)") }
        guard latencyMilliseconds >= 0 else { throw ValidationError("--latency-ms must not be negative") }
        guard slowMilliseconds >= 0 else { throw ValidationError("--slow-ms must not be negative") }
        if let feedStatus, !(100...599).contains(feedStatus) {
            throw ValidationError("--feed-status must be an HTTP status (100...599), got \(feedStatus)")
        }
        _ = try faults()
    }

    /// The initial fault plan from the options; rejects a number or `all` given to two options.
    func faults() throws -> GalleryFaults {
        var plan = GalleryFaults(latencyMilliseconds: latencyMilliseconds, emptyFeed: emptyFeed, feedStatus: feedStatus)
        var allOption: String?
        var optionByNumber: [Int: String] = [:]
        let options: [(String, FaultTargets?, ImageFault)] = [
            ("--corrupt", corrupt, .corrupt), ("--truncate", truncate, .truncated),
            ("--server-error", serverError, .serverError), ("--endless", endless, .endless),
            ("--changing", changing, .changing), ("--slow", slow, .slow(milliseconds: slowMilliseconds)),
        ]
        for case let (option, targets?, fault) in options {
            if targets.all {
                if let allOption {
                    throw ValidationError("`all` is given to both \(allOption) and \(option); give it to one")
                }
                allOption = option
                plan.allImages = fault
            }
            for n in targets.numbers {
                if let other = optionByNumber[n] {
                    throw ValidationError("image \(n) is listed in both \(other) and \(option); list it in one")
                }
                optionByNumber[n] = option
                plan.imageFaults[n] = fault
            }
        }
        return plan
    }

    func run() async throws {
        var requestLogger: (@Sendable (GalleryRequestRecord) -> Void)?
        if !quiet {
            requestLogger = { record in
                GalleryCommand.logLine(record.logfmt)
            }
        }
        let server = GalleryServer(configuration: GalleryConfiguration(
            host: host,
            port: port,
            count: count,
            faults: try faults(),
            imageSize: small ? .small : .full,
            requestLogger: requestLogger
        ))
        // Watch the signals before announcing the URL: a script may signal as soon as it reads it.
        let watcher = SignalWatcher(signals: [SIGINT, SIGTERM])
        let url = try await server.start()
        // The contract with scripts: the first stdout line is the URL, written at once, unbuffered.
        _ = try FileDescriptor.standardOutput.writeAll("\(url)\n".utf8)
        Self.logLine("event=listening url=\(url) count=\(count) small=\(small)")

        let signal = await watcher.next()
        Self.logLine("event=stopping signal=\(signal.map(SignalWatcher.name(of:)) ?? "none")")
        await server.stop()
        Self.logLine("event=stopped")
    }

    /// Writes one line to stderr in a single write, so lines from concurrent requests never mix.
    static func logLine(_ line: String) {
        _ = try? FileDescriptor.standardError.writeAll("\(line)\n".utf8)
    }
}
