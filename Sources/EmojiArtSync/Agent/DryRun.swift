import CurlHTTP
import Logging

/// `--once --dry-run`: what a `--once` run would fetch, replace, adopt, refresh, refuse and remove in DIR,
/// decided by the run's own steps (`SyncEngine.planOnce`), with nothing written in DIR or its state directory.
///
/// How it keeps DIR as it is: DIR is looked at, never prepared (no directory made); the index is a copy in
/// memory (`AssetIndex.snapshot`); no log file is opened (errors go to stderr); no image is downloaded, only
/// the feed. The lock is queried, not taken (`DirectoryLock.holder`, as `status` does): taking it would create
/// the lock file on a first run, and a run that writes nothing has nothing for a lock to protect; but an agent
/// that holds it is changing DIR as the plan is made, so the dry run stops as a real run would (exit 3).
public enum DryRun {
    public static func run(configuration: AgentConfiguration) async throws -> DryRunReport {
        let directory = configuration.directory
        try directory.checkWithoutPreparing()
        if let pid = DirectoryLock.holder(path: directory.lockPath) {
            throw SyncError(
                .locked, "another emojiart-sync (PID \(pid)) already runs on this directory (lock \(directory.lockPath))",
                path: directory.lockPath)
        }
        let sink = try LogSink(path: nil, alsoStandardError: configuration.logging.toStandardError, format: configuration.logging.format)
        defer { sink.shutdown() }
        // Every part that logs here is the silo's.
        let logger = Logger.writing(to: sink, level: .error, format: configuration.logging.format, whenFull: .drop)
        let client = try CurlHTTPClient(configuration: configuration.httpClient)
        defer { client.shutdown() }
        let fetcher = configuration.fetcher(client: client, metrics: .off)
        let (core, notice) = try await MirrorCore.openForDryRun(
            directory: directory,
            memory: ImageLoader(memoryLimit: configuration.memoryLimit, retryPolicy: configuration.http.retryPolicy),
            fetcher: fetcher, logger: logger,
            accessLines: AccessLineWriter(sink: sink, level: .error, format: configuration.logging.format))
        let engine = SyncEngine(
            core: core, fetcher: fetcher, accessWindow: configuration.accessWindow,
            maxDeletePercent: configuration.safety.maxDeletePercent, logger: logger)
        return try await engine.planOnce(notice: notice)
    }
}
