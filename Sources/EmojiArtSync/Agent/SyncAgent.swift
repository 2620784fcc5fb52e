import CurlHTTP
import Logging

/// Wires the parts together for a run: log sink, HTTP client, fetcher, memory loader, database, engine.
///
/// The command line only parses arguments and calls this; tests call it the same way, in process.
public final class SyncAgent: Sendable {
    public let configuration: AgentConfiguration
    public let logger: Logger
    public let client: CurlHTTPClient
    public let fetcher: AssetFetcher
    public let loader: ImageLoader
    public let database: ImageDatabase
    public let engine: SyncEngine

    /// Builds the agent and prepares DIR (creating it when missing). Throws a `SyncError` a person can act on.
    public init(configuration: AgentConfiguration) async throws {
        self.configuration = configuration
        try configuration.directory.prepare()
        let sink = try LogSink(path: configuration.effectiveLogFile, alsoStandardError: configuration.logToStandardError)
        var logger = Logger(label: "emojiart-sync") { _ in LogfmtLogHandler(sink: sink, level: configuration.logLevel) }
        logger.logLevel = configuration.logLevel
        self.logger = logger
        var http = HTTPClientConfiguration()
        http.maxConcurrentRequests = configuration.concurrency
        http.connectTimeout = configuration.connectTimeout
        http.lowSpeedTime = configuration.stallTimeout
        http.maxBodySize = configuration.maxBodySize
        http.userAgent = "emojiart-sync/\(EmojiArtSyncVersion.current)"
        self.client = try CurlHTTPClient(configuration: http)
        self.fetcher = AssetFetcher(
            client: client, server: configuration.server, verification: configuration.verification,
            retries: configuration.retries)
        self.loader = ImageLoader(memoryLimit: configuration.memoryLimit)
        self.database = await ImageDatabase(
            directory: configuration.directory, loader: loader, fetcher: fetcher, logger: logger)
        self.engine = SyncEngine(database: database, fetcher: fetcher, logger: logger)
        try await database.setUp()
    }

    /// One full pass (`--once`).
    public func syncOnce() async throws -> SyncReport {
        try await engine.syncOnce()
    }

    /// Stops the HTTP client's thread. Idempotent.
    public func shutdown() {
        client.shutdown()
    }
}
