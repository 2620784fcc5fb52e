import ArgumentParser
import CurlHTTP
import FoundationEssentials
import EmojiArtPNG
import EmojiArtSync
import Logging

#if canImport(Glibc)
import Glibc
import SystemPackage
#endif

extension PNGVerification: ExpressibleByArgument {}
extension LogFormat: ExpressibleByArgument {}

/// The options of a sync run: `emojiart-sync --dir DIR [--once] ...`. None has a default here: an option not
/// given falls through to the environment, the config file and then the default (`SettingsResolver`), so
/// the defaults are stated in the help text, from `RunSetting`.
struct RunOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The directory to keep in sync (created if missing).", valueName: "dir"), completion: .directory)
    var dir: String?

    @Flag(name: .long, help: "Allow a DIR that is the root of a file system or your home directory itself (refused otherwise).")
    var allowRootDir = false

    @Option(name: .long, help: ArgumentHelp("The gallery's origin\(Self.defaultText(.server)).", valueName: "url"))
    var server: String?

    @Flag(name: .long, help: "Sync once, then exit with a status that says how complete DIR is.")
    var once = false

    // A flag only, never a setting of the environment or the config file: left there it would turn every later
    // `--once` into a run that changes nothing (man page, --dry-run).
    @Flag(name: .long, help: "With --once: print what the run would fetch, replace, adopt, refresh, refuse and remove, one line each, and change nothing in DIR (the feed is read, no image is downloaded).")
    var dryRun = false

    // Numbers and durations are parsed `.unconditional`ly, so `--interval -5` reaches the range check and
    // its message instead of reading `-5` as an unknown option.
    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Time between feed polls, jittered by 10%: 90s, 5m, 1h (a plain number is seconds)\(Self.defaultText(.interval)).", valueName: "duration"))
    var interval: String?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Time per background scrub pass (every owned file re-read and re-hashed, at most 4 MiB/s): 12h, 7d (a plain number is hours); 0 turns it off\(Self.defaultText(.scrubInterval)).", valueName: "duration"))
    var scrubInterval: String?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Refuse a poll that would delete more than this percentage of the agent's files, or finds an empty feed; 100 = allow\(Self.defaultText(.maxDelete)).", valueName: "percent"))
    var maxDelete: Int?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Transfers at once\(Self.defaultText(.concurrency)).", valueName: "n"))
    var concurrency: Int?

    @Option(name: .long, help: ArgumentHelp("Bound of the in-memory cache, e.g. 64M, 1G\(Self.defaultText(.memoryLimit)).", valueName: "size"))
    var memoryLimit: String?

    @Option(name: .long, help: ArgumentHelp("How hard to check PNGs: structure (chunks and CRCs; garbled image data behind correct CRCs passes) or full (also decode every row; once per download)\(Self.defaultText(.verify)).", valueName: "level"))
    var verify: PNGVerification?

    @Option(name: .long, help: ArgumentHelp("Largest response body accepted\(Self.defaultText(.maxBodySize)).", valueName: "size"))
    var maxBodySize: String?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Extra attempts per asset after a transient network failure\(Self.defaultText(.retries)).", valueName: "n"))
    var retries: Int?

    @Option(name: .long, help: ArgumentHelp("Log file (default: DIR/.emojiart-sync/sync.log); none (or off) writes no file, for a journal that keeps the lines.", valueName: "path"), completion: .file())
    var logFile: String?

    @Option(name: .long, help: ArgumentHelp("Rotate the log file when it would pass this size, e.g. 16M, 1G\(Self.defaultText(.logMaxSize)).", valueName: "size"))
    var logMaxSize: String?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Rotated log files kept, 1...100\(Self.defaultText(.logKeep)).", valueName: "n"))
    var logKeep: Int?

    @Option(name: .long, help: ArgumentHelp("trace, debug, info, notice, warning, error or critical\(Self.defaultText(.logLevel)).", valueName: "level"), completion: .list(Logger.Level.allCases.map(\.rawValue)))
    var logLevel: String?

    @Option(name: .long, help: ArgumentHelp("Log lines as logfmt or json (same keys)\(Self.defaultText(.logFormat)).", valueName: "format"))
    var logFormat: LogFormat?

    @Flag(name: .shortAndLong, help: "Do not copy log lines or draw progress on stderr.")
    var quiet = false

    @Option(name: .long, help: ArgumentHelp("Serve Prometheus metrics at http://HOST:PORT/metrics (e.g. 127.0.0.1:9464; off by default). Unauthenticated: keep it on loopback unless you mean to publish it.", valueName: "host:port"))
    var metricsListen: String?

    @Option(name: .long, help: ArgumentHelp("Trust the certificate authorities in this PEM file for an https gallery (a private CA), instead of the system's store. Proxies come from https_proxy, http_proxy, all_proxy and no_proxy, as for curl.", valueName: "file"), completion: .file())
    var caCert: String?

    @Option(name: .long, help: ArgumentHelp("How long connecting to the gallery (TCP and TLS) may take, e.g. 10s, 500ms\(Self.defaultText(.connectTimeout)).", valueName: "duration"))
    var connectTimeout: String?

    @Option(name: .long, help: ArgumentHelp("Abandon a transfer that receives nothing for this long, e.g. 30s, 2m\(Self.defaultText(.stallTimeout)).", valueName: "duration"))
    var stallTimeout: String?

    @Option(name: .long, help: ArgumentHelp("The longest wait obeyed when the gallery answers 429 or 503 with Retry-After (no request for that URL, or for anything when the feed asked, until it is over), e.g. 10m, 1h\(Self.defaultText(.maxRetryAfter)).", valueName: "duration"))
    var maxRetryAfter: String?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Limit what all transfers together receive, in bytes per second: 512k, 10M (binary units, as rclone writes them), or off\(Self.defaultText(.bwlimit)).", valueName: "rate"))
    var bwlimit: String?

    @Option(name: .long, help: ArgumentHelp("The HTTP version asked of the gallery: 1.1 (up to --concurrency connections), 2 (one connection, --concurrency streams on it), or auto (HTTP/2 when an https gallery offers it)\(Self.defaultText(.httpVersion)).", valueName: "version"), completion: .list(HTTPVersion.allCases.map(\.rawValue)))
    var httpVersion: String?

    private static func defaultText(_ setting: RunSetting) -> String {
        setting.defaultValue.map { " (default: \($0))" } ?? ""
    }

    /// The options given on the command line, as the config file would spell them.
    var given: [RunSetting: String] {
        var given: [RunSetting: String] = [:]
        given[.dir] = dir
        if allowRootDir { given[.allowRootDir] = "true" }
        given[.server] = server
        if once { given[.once] = "true" }
        given[.interval] = interval
        given[.maxDelete] = maxDelete.map(String.init)
        given[.concurrency] = concurrency.map(String.init)
        given[.memoryLimit] = memoryLimit
        given[.verify] = verify?.rawValue
        given[.maxBodySize] = maxBodySize
        given[.retries] = retries.map(String.init)
        given[.logFile] = logFile
        given[.logMaxSize] = logMaxSize
        given[.logKeep] = logKeep.map(String.init)
        given[.logLevel] = logLevel
        given[.logFormat] = logFormat?.rawValue
        if quiet { given[.quiet] = "true" }
        given[.scrubInterval] = scrubInterval
        given[.metricsListen] = metricsListen
        given[.caCert] = caCert
        given[.connectTimeout] = connectTimeout
        given[.stallTimeout] = stallTimeout
        given[.maxRetryAfter] = maxRetryAfter
        given[.bwlimit] = bwlimit
        given[.httpVersion] = httpVersion
        return given
    }

    /// Resolves the settings (flags, environment, config file, defaults) and checks them; a problem is a
    /// usage error (exit 64).
    func settings() async throws -> (RunSettings, SettingsResolver) {
        do {
            let resolver = try await SettingsResolver(flags: given)
            return (try RunSettings(resolver), resolver)
        } catch let error as SettingsError {
            throw error.usageExit()
        }
    }
}

/// Runs the agent the options describe: one pass with `--once`, the background agent otherwise.
enum RunCommand {
    static func run(_ options: RunOptions) async throws {
        // Not read, and not ignored either: someone who set it expects a dry run, and would get a real one.
        if ProcessInfo.processInfo.environment["EMOJIART_SYNC_DRY_RUN"] != nil {
            throw SettingsError("EMOJIART_SYNC_DRY_RUN is not read: --dry-run is a flag only; unset it, and pass --dry-run with --once").usageExit()
        }
        let (settings, _) = try await options.settings()
        if options.dryRun {
            guard settings.once else {
                throw SettingsError("--dry-run needs --once: it shows what one pass would do, and the agent has no dry run").usageExit()
            }
            return try await runDryRun(settings)
        }
        // A live progress line only for a person watching a one-shot run.
        let progressLine = settings.once && !settings.quiet && ProgressLine.isTerminal() ? ProgressLine() : nil
        let configuration = settings.agentConfiguration(drawsProgress: progressLine != nil)
        // Before the lock: `purge` signals whoever holds it, and an untrapped SIGUSR1 would kill this process.
        let trapped = await TrappedSignals.trap()
        // A log or standard error piped to a reader that went away (a `tee` or logger that died) is a failed write
        // (`EPIPE`, the line lost), not the end of the run: as systemd runs services (`IgnoreSIGPIPE=yes`).
        signal(SIGPIPE, SIG_IGN)
        // Before any file is staged: each new file waiting for its commit holds a descriptor (see the man page).
        if let shortfall = OpenFileLimit.shortfall(concurrency: configuration.http.concurrency) {
            printError("emojiart-sync: \(shortfall)")
            throw ExitCode(ExitStatus.fatal.rawValue)
        }
        OpenFileLimit.raiseSoftLimit()
        let agent: SyncAgent
        do {
            agent = try await SyncAgent(configuration: configuration)
        } catch let error as SyncError where error.code == .locked {
            printError("emojiart-sync: \(error)")
            throw ExitCode(ExitStatus.locked.rawValue)
        } catch {
            printError("emojiart-sync: \(error)")
            throw ExitCode(ExitStatus.fatal.rawValue)
        }
        if settings.once {
            let status = try await runOnce(agent, trapped: trapped, progressLine: progressLine)
            endProcess(status, leaving: agent)
        } else {
            let background = await BackgroundAgent(agent: agent)
            let metrics = try await startMetricsEndpoint(agent)
            let status = await background.run(trapped: trapped)
            await metrics?.stop()
            // Said on stderr even with --quiet: the log file may have gone with DIR.
            if let failure = background.failure { printError("emojiart-sync: \(failure)") }
            if status != .success { throw ExitCode(status.rawValue) }
        }
    }

    /// Serves `/metrics` when `--metrics-listen` asked for it; a port that cannot be bound is fatal (exit 1).
    static func startMetricsEndpoint(_ agent: SyncAgent) async throws -> MetricsEndpoint? {
        guard let registry = agent.metricsRegistry, let address = agent.configuration.metricsListen else { return nil }
        do {
            let endpoint = try await MetricsEndpoint.start(registry: registry, address: address)
            agent.logger.info("serving metrics", metadata: ["event": "metrics", "url": .string(endpoint.url)])
            return endpoint
        } catch {
            agent.logger.critical("cannot serve metrics", metadata: ["event": "fatal", "error": .string(error.message)])
            agent.shutdown()
            printError("emojiart-sync: \(error)")
            throw ExitCode(ExitStatus.fatal.rawValue)
        }
    }

    /// `--once --dry-run`: the plan on stdout, one line per decision then the summary, the same on a terminal and
    /// off one; the exit status the real run would have as far as it can be known without downloading.
    static func runDryRun(_ settings: RunSettings) async throws {
        let report: DryRunReport
        do {
            report = try await DryRun.run(configuration: settings.agentConfiguration(drawsProgress: false))
        } catch let error as SyncError where error.code == .locked {
            printError("emojiart-sync: \(error)")
            throw ExitCode(ExitStatus.locked.rawValue)
        } catch {
            printError("emojiart-sync: dry run failed: \(error)")
            throw ExitCode(ExitStatus.fatal.rawValue)
        }
        if let notice = report.notice { printError("emojiart-sync: \(notice)") }
        let text = (report.decisions.map(\.line) + [report.summary]).joined(separator: "\n") + "\n"
        _ = try? FileDescriptor.standardOutput.writeAll(text.utf8)
        if report.exitStatus != .success { throw ExitCode(report.exitStatus.rawValue) }
    }

    /// How many missing assets a `--once` run names on stderr before it says how many more there are.
    static let missingShown = 20

    /// A finished `--once` run: its exit status, once everything is said and the agent is shut down (log written,
    /// lock released). Throws the `ExitCode` of a run that was interrupted or failed.
    static func runOnce(_ agent: SyncAgent, trapped: TrappedSignals, progressLine: ProgressLine?) async throws -> ExitStatus {
        // The pass runs in a task of its own so that SIGTERM/SIGINT can cancel it.
        var onProgress: (@Sendable (SyncProgress) -> Void)?
        if let progressLine { onProgress = { progressLine.update($0) } }
        let syncing = Task { [onProgress] in try await agent.syncOnce(onProgress: onProgress) }
        let responder = OneShotSignalResponder(agent: agent) { syncing.cancel() }
        let answering = Task { await responder.run(trapped) }
        defer {
            answering.cancel()
            agent.shutdown()
        }
        let outcome = await withTaskCancellationHandler {
            await syncing.result
        } onCancel: {
            syncing.cancel()
        }
        agent.flushLog()  // the pass's log lines come before the summary on stderr
        switch outcome {
        case .success(let report): progressLine?.finish(summary: ProgressFormat.summary(report))
        case .failure: progressLine?.finish(summary: "sync failed")
        }
        if let signal = responder.interruptingSignal {
            printError("emojiart-sync: interrupted by \(signal == SIGINT ? "SIGINT" : "SIGTERM"); DIR is partial, run again to finish")
            throw ExitCode(128 + signal)
        }
        let report: SyncReport
        switch outcome {
        case .success(let done):
            report = done
        case .failure(let error):
            printError("emojiart-sync: sync failed: \(error)")
            throw ExitCode(ExitStatus.fatal.rawValue)
        }
        if let refusal = report.deletionRefused { printError("emojiart-sync: \(refusal)") }
        if !report.isComplete {
            printError("emojiart-sync: \(report.available) of \(report.uniqueAssets) assets synced; missing:")
            // The first few in key order; the log has a line for every one (a large gallery can miss thousands:
            // only the lines shown are formatted, and the first few are picked in one pass, not by sorting all).
            var failures: [SyncReport.Failure] = []
            for failure in report.failures
            where failures.count < Self.missingShown || failure.key < failures[failures.count - 1].key {
                failures.insert(failure, at: failures.firstIndex { failure.key < $0.key } ?? failures.count)
                if failures.count > Self.missingShown { failures.removeLast() }
            }
            let lines = failures.map { "  \($0.key): \($0.reason)" }
                + report.rejected.prefix(Self.missingShown - failures.count).map { "  \($0.url): \($0)" }
            for line in lines { printError(line) }
            let missing = report.failures.count + report.rejected.count
            if missing > Self.missingShown {
                printError("  ... and \(missing - Self.missingShown) more (every one is in the log: grep result=failed)")
            }
        }
        return ExitStatus.of(report)
    }

    /// Exits with `status` while `agent` is still alive: a finished `--once` run leaves its state (at 100,000 assets
    /// the keys, the catalogue's tables, the memory cache: about 50 ms of freeing, object by object) to the kernel,
    /// which takes it back at once. Nothing is lost by not closing the index: the pass ended with a checkpoint that
    /// emptied its write-ahead log, so what closing would do (remove the empty `-wal` and `-shm` files) changes
    /// nothing the next start reads, and the checkpoint's record still holds (`AssetIndex.checkpointStillHolds`).
    /// `agent.shutdown()` has run: the log is written, the lock released, the temporary files removed.
    static func endProcess(_ status: ExitStatus, leaving agent: SyncAgent) -> Never {
        withExtendedLifetime(agent) { exit(status.rawValue) }
    }
}

/// Writes a line to stderr.
func printError(_ line: String) {
    _ = try? FileDescriptor.standardError.writeAll((line + "\n").utf8)
}
