import ArgumentParser
import Foundation
import EmojiArtPNG
import EmojiArtSync
import Logging

#if canImport(Glibc)
import Glibc
#endif

extension PNGVerification: ExpressibleByArgument {}

/// The options of a sync run: `emojiart-sync --dir DIR [--once] ...`.
struct RunOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The directory to keep in sync (created if missing).", valueName: "dir"))
    var dir: String?

    @Option(name: .long, help: ArgumentHelp("The gallery's origin.", valueName: "url"))
    var server: String = "http://localhost:8080"

    @Flag(name: .long, help: "Sync once, then exit with a status that says how complete DIR is.")
    var once = false

    @Option(name: .long, help: ArgumentHelp("Seconds between feed polls (jittered by 10%).", valueName: "seconds"))
    var interval: Int = 60

    @Option(name: .long, help: ArgumentHelp("Hours per background scrub pass (every owned file re-read and re-hashed, at most 4 MiB/s); 0 turns it off.", valueName: "hours"))
    var scrubInterval: Int = 24

    @Option(name: .long, help: ArgumentHelp("Refuse a poll that would delete more than this percentage of the agent's files, or finds an empty feed (100 = allow).", valueName: "percent"))
    var maxDelete: Int = 50

    @Option(name: .long, help: ArgumentHelp("Transfers at once.", valueName: "n"))
    var concurrency: Int = 8

    @Option(name: .long, help: ArgumentHelp("Bound of the in-memory cache (e.g. 64M, 1G).", valueName: "size"))
    var memoryLimit: String = "64M"

    @Option(name: .long, help: ArgumentHelp("How hard to check PNGs: structure (chunks and CRCs) or full (decode every row).", valueName: "level"))
    var verify: PNGVerification = .structure

    @Option(name: .long, help: ArgumentHelp("Largest image body accepted (the feed's own limit is 64M).", valueName: "size"))
    var maxBodySize: String = "4M"

    @Option(name: .long, help: ArgumentHelp("Extra attempts per asset after a transient network failure.", valueName: "n"))
    var retries: Int = 2

    @Option(name: .long, help: ArgumentHelp("Log file (default: DIR/.emojiart-sync/sync.log).", valueName: "path"))
    var logFile: String?

    @Option(name: .long, help: ArgumentHelp("trace, debug, info, notice, warning, error or critical.", valueName: "level"))
    var logLevel: String = "info"

    @Flag(name: .shortAndLong, help: "Do not copy log lines to stderr.")
    var quiet = false

    @Option(name: .long, help: ArgumentHelp("Serve Prometheus metrics at http://HOST:PORT/metrics (e.g. 127.0.0.1:9464; off by default). Unauthenticated: keep it on loopback unless you mean to publish it.", valueName: "host:port"))
    var metricsListen: String?

    func validate() throws {
        guard let dir, !dir.isEmpty else { throw ValidationError("missing --dir DIR: the directory to keep in sync") }
        guard interval >= 1 && interval <= 86_400 else { throw ValidationError("--interval must be 1...86400 seconds") }
        guard scrubInterval >= 0 && scrubInterval <= 24 * 365 else { throw ValidationError("--scrub-interval must be 0...8760 hours") }
        guard maxDelete >= 0 && maxDelete <= 100 else { throw ValidationError("--max-delete must be 0...100") }
        guard concurrency >= 1 && concurrency <= 256 else { throw ValidationError("--concurrency must be 1...256") }
        guard ByteCount.parse(memoryLimit) != nil else { throw ValidationError("--memory-limit: cannot read \"\(memoryLimit)\" as a size") }
        guard let body = ByteCount.parse(maxBodySize), body > 0 else { throw ValidationError("--max-body-size: cannot read \"\(maxBodySize)\" as a size") }
        guard retries >= 0 && retries <= 10 else { throw ValidationError("--retries must be 0...10") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level: unknown level \"\(logLevel)\"") }
        if let metricsListen, MetricsListenAddress(metricsListen) == nil {
            throw ValidationError("--metrics-listen: cannot read \"\(metricsListen)\" as HOST:PORT (e.g. 127.0.0.1:9464)")
        }
        do {
            _ = try ServerAddress(server)
        } catch {
            throw ValidationError("--server: \(error)")
        }
    }

    func configuration() throws -> AgentConfiguration {
        var configuration = AgentConfiguration(directory: SyncDirectory(dir!))
        configuration.server = try ServerAddress(server)
        configuration.concurrency = concurrency
        configuration.memoryLimit = ByteCount.parse(memoryLimit)!
        configuration.maxBodySize = ByteCount.parse(maxBodySize)!
        configuration.verification = verify
        configuration.retries = retries
        configuration.logFile = logFile
        configuration.logLevel = Logger.Level(rawValue: logLevel)!
        configuration.logToStandardError = !quiet
        configuration.pollInterval = .seconds(interval)
        configuration.maxDeletePercent = maxDelete
        configuration.scrubInterval = scrubInterval == 0 ? nil : .seconds(scrubInterval * 3600)
        configuration.metricsListen = metricsListen.flatMap(MetricsListenAddress.init)
        return configuration
    }
}

/// Runs the agent the options describe: one pass with `--once`, the background agent otherwise.
enum RunCommand {
    static func run(_ options: RunOptions) async throws {
        let configuration = try options.configuration()
        // Before the lock: `purge` signals whoever holds it, and an untrapped SIGUSR1 would kill this process.
        let trapped = await TrappedSignals.trap()
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
        if options.once {
            try await runOnce(agent, trapped: trapped)
        } else {
            let background = await BackgroundAgent(agent: agent)
            let metrics = try await startMetricsEndpoint(agent)
            let status = await background.run(trapped: trapped)
            await metrics?.stop()
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
            printError("emojiart-sync: \(error)")
            agent.shutdown()
            throw ExitCode(ExitStatus.fatal.rawValue)
        }
    }

    static func runOnce(_ agent: SyncAgent, trapped: TrappedSignals) async throws {
        let responder = OneShotSignalResponder(agent: agent)
        let answering = Task { await responder.run(trapped) }
        defer {
            answering.cancel()
            agent.shutdown()
        }
        let outcome: Result<SyncReport, any Error>
        do {
            outcome = .success(try await agent.syncOnce())
        } catch {
            outcome = .failure(error)
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
        if !report.isComplete {
            printError("emojiart-sync: \(report.available) of \(report.uniqueAssets) assets synced; missing:")
            for failure in report.failures {
                printError("  \(failure.key): \(failure.reason)")
            }
            for rejection in report.rejected {
                printError("  \(rejection.url): \(rejection)")
            }
        }
        let status = ExitStatus.of(report)
        if status != .success { throw ExitCode(status.rawValue) }
    }
}

/// Writes a line to stderr.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
