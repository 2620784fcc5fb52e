import CurlHTTP
import Logging
import Prometheus

/// Wires the parts together for a run: log sink, HTTP client, fetcher, the mirror's parts (`MirrorCore`), engine.
///
/// The command line only parses arguments and calls this; tests call it the same way, in process.
public final class SyncAgent: Sendable {
    public let configuration: AgentConfiguration
    public let logger: Logger
    /// The logger of the parts isolated to the `SyncActor` silo (the mirror's core, the engine, the keeper): it
    /// never waits for a stuck log writer, so the silo's thread never parks on the log (lines dropped are counted).
    let siloLogger: Logger
    /// The log file; `SIGHUP` reopens it.
    let logSink: LogSink
    let client: CurlHTTPClient
    let fetcher: AssetFetcher
    /// The memory layer, the index, the committer and the rest: opened with DIR.
    let core: MirrorCore
    let engine: SyncEngine
    /// Held for the agent's lifetime: one agent per directory.
    let lock: DirectoryLock
    /// What the metrics are recorded into, for `MetricsEndpoint`; nil without `--metrics-listen`.
    public let metricsRegistry: PrometheusCollectorRegistry?

    /// Builds the agent: prepares DIR (creating it when missing), takes its lock, removes temporary files a
    /// crashed run left behind, loads the manifest. Throws a `SyncError` a person can act on (`.locked` when
    /// another agent runs on DIR).
    public init(configuration: AgentConfiguration) async throws {
        self.configuration = configuration
        try configuration.directory.prepare()
        self.lock = try DirectoryLock.acquire(path: configuration.directory.lockPath)
        configuration.directory.removeStaleTemporaryFiles()
        let returned = OwnershipGuard.returnHeldFiles(in: configuration.directory)
        let sink = try LogSink(
            path: configuration.effectiveLogFile, alsoStandardError: configuration.logging.toStandardError,
            rotation: configuration.logging.rotation, format: configuration.logging.format)
        self.logSink = sink
        let logging = configuration.logging
        let logger = Logger.writing(to: sink, level: logging.level, format: logging.format)
        self.logger = logger
        let siloLogger = Logger.writing(to: sink, level: logging.level, format: logging.format, whenFull: .drop)
        self.siloLogger = siloLogger
        if let path = configuration.effectiveLogFile, !sink.rotates {
            logger.notice("log file written through, never rotated: not a regular file of its own", metadata: [
                "event": "log", "path": .string(path), "rotation": "off",
            ])
        }
        self.client = try CurlHTTPClient(configuration: configuration.httpClient)
        self.metricsRegistry = configuration.metricsListen.map { _ in PrometheusCollectorRegistry() }
        self.fetcher = configuration.fetcher(
            client: client, metrics: metricsRegistry.map { SyncMetrics(registry: $0) } ?? .off)
        for name in returned {
            logger.warning("file held by a run that crashed handed back", metadata: ["event": "conflict", "file": .string(name)])
        }
        let core = try await MirrorCore.open(
            directory: configuration.directory,
            memory: ImageLoader(memoryLimit: configuration.memoryLimit, retryPolicy: configuration.http.retryPolicy),
            fetcher: fetcher, logger: siloLogger,
            accessLines: AccessLineWriter(sink: sink, level: configuration.logging.level, format: configuration.logging.format),
            hooks: configuration.testHooks)
        self.core = core
        self.engine = SyncEngine(
            core: core, fetcher: fetcher, accessWindow: configuration.onceAccessWindow,
            maxDeletePercent: configuration.safety.maxDeletePercent, logger: siloLogger)
        let changes = core.log.changes
        fetcher.serverWaits.observe { [logger] wait in
            logger.warning("gallery asked to wait", metadata: [
                "event": "wait", "url": .string(wait.url), "status": .stringConvertible(wait.status),
                "scope": .string(wait.wholeGallery ? "gallery" : "url"),
                "until": .string(ServerWaits.timestamp(wait.untilDate)),
                "wait": .string(wait.obeyed.secondsText),
                "capped": .stringConvertible(wait.capped),
            ])
            changes.ring()
        }
    }

    /// One full pass (`--once`); `onProgress` is told as its assets are done (the command line's progress line).
    public func syncOnce(onProgress: (@Sendable (SyncProgress) -> Void)? = nil) async throws -> SyncReport {
        try await engine.syncOnce(onProgress: onProgress)
    }

    /// Empties the memory cache (`SIGUSR1`); returns what it held.
    public func purgeMemory() async -> (entries: Int, bytes: Int) {
        await core.memory.purge()
    }

    /// One whole scrub pass now, first file to last, at full speed (`emojiart-sync scrub` with no agent on DIR).
    public func scrub() async -> Scrubber.Findings {
        await Scrubber(core: core, logger: siloLogger).fullPass()
    }

    /// Reopens the log file (`SIGHUP`: logrotate moved it away).
    public func reopenLog() {
        logSink.reopen()
    }

    /// Writes the log's buffered lines now, so that they come before what the command prints next.
    public func flushLog() {
        logSink.flush()
    }

    /// Fails the transfers in flight and refuses new ones: an interrupted `--once` ends its pass at once.
    public func stopTransfers() {
        client.shutdown()
    }

    /// Stops the HTTP client's thread, removes temporary files, releases the lock, writes the log's buffered
    /// lines and stops its writer thread (later lines are written at once). Idempotent.
    public func shutdown() {
        client.shutdown()
        configuration.directory.removeStaleTemporaryFiles()
        lock.release()
        logSink.shutdown()
    }
}
