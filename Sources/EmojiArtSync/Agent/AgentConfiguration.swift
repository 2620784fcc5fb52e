import CurlHTTP
import EmojiArtPNG
import Logging

/// Everything a run of the agent is configured with, nested by concern (`http`, `logging`, `schedule`,
/// `safety`) the way hummingbird nests its `Configuration`; the command line fills it in, tests build it
/// directly. Defaults are the documented ones. It holds values only: what the user interface is told as a pass
/// goes (the progress line) is passed to `SyncAgent.syncOnce(onProgress:)`.
public struct AgentConfiguration: Sendable {
    public var directory: SyncDirectory
    /// The memory cache's bound. 64 MiB holds the book gallery many times over.
    public var memoryLimit = 64 * 1024 * 1024
    /// Talking to the gallery: where it is, how many transfers, their limits and retries.
    public var http = HTTP()
    /// Where log lines go and how they are written.
    public var logging = Log()
    /// When the background agent polls, rescans and scrubs.
    public var schedule = Schedule()
    /// What protects the mirror: how images are checked, how much a poll may delete.
    public var safety = Safety()
    /// Where to serve Prometheus metrics (`--metrics-listen`); nil (the default) records nothing.
    public var metricsListen: MetricsListenAddress?

    /// What a test makes happen inside this agent's file decisions; nil outside tests.
    var testHooks: AgentTestHooks?

    public init(directory: SyncDirectory) {
        self.directory = directory
    }

    /// Accesses a pass keeps pending at once (duplicates waiting on a load included): enough to keep
    /// `http.concurrency` transfers busy while others are answered from memory or disk, never a task per entry.
    /// A miss stays pending until its group commit is done, so the window also caps the commit's batches: at
    /// `concurrency * 8` (64) a cold pass of 100,000 small files ran batches of about 30, each paying a `syncfs`
    /// and a directory `fsync` (docs/BENCHMARKS.md, "the cold path").
    var accessWindow: Int { max(32, http.concurrency * 64) }

    /// `--once`'s window, twice the agent's: its commit batches grow twice as large, so a cold run pays about half
    /// the `syncfs` and directory `fsync` calls (a cold run of 100,000 small files on a disk about a tenth quicker,
    /// its peak 2.5 MiB higher). The agent keeps the narrower one: the heap a wider window leaves behind stays with a
    /// process that goes on running (an idle agent held about 2 MiB more), and a `--once` run exits
    /// (docs/BENCHMARKS.md, eighteenth session).
    var onceAccessWindow: Int { 2 * accessWindow }

    /// The log file's path; nil when there is none (`logging.writesFile` false).
    var effectiveLogFile: String? { logging.writesFile ? logging.file ?? directory.logPath : nil }

    /// The HTTP client's settings: a run's and a dry run's.
    var httpClient: HTTPClientConfiguration {
        var client = HTTPClientConfiguration()
        client.maxConcurrentRequests = http.concurrency
        client.connectTimeout = http.connectTimeout
        client.lowSpeedTime = http.stallTimeout
        client.maxBodySize = http.maxBodySize
        client.caCertificateFile = http.caCertificateFile
        client.maxReceiveBytesPerSecond = http.bandwidthLimit
        client.httpVersion = http.version
        client.userAgent = "emojiart-sync/\(EmojiArtSyncVersion.current)"
        return client
    }

    /// The fetcher of this gallery over `client`.
    func fetcher(client: CurlHTTPClient, metrics: SyncMetrics) -> AssetFetcher {
        AssetFetcher(
            client: client, server: http.server, verification: safety.verification, retries: http.retries,
            metrics: metrics, maximumRetryAfter: http.maxRetryAfter)
    }
}

extension AgentConfiguration {
    /// Talking to the gallery (`--server`, `--concurrency`, the timeouts, `--ca-cert`, `--retries`,
    /// `--max-retry-after`, `--bwlimit`, `--http-version`).
    public struct HTTP: Sendable {
        public var server: ServerAddress = .default
        /// Transfers at once. 8 keeps a small gallery server busy without queueing at its accept loop.
        public var concurrency = 8
        /// Largest image body accepted (an endless body is cut here); the feed has its own limit,
        /// `GalleryFeed.maximumBodySize`. Bodies stream to their temporary file, so this bounds disk, not memory:
        /// 1 GiB never refuses a photo and still stops a body that would never end.
        public var maxBodySize = 1024 * 1024 * 1024
        /// How long connecting to the gallery (TCP and TLS) may take.
        public var connectTimeout: Duration = .seconds(10)
        /// A transfer slower than 1 byte/s for this long is abandoned.
        public var stallTimeout: Duration = .seconds(30)
        /// A PEM file of certificate authorities to trust for an `https` gallery (a private CA), instead of the
        /// system's store; nil uses the system's.
        public var caCertificateFile: String?
        /// Extra attempts per access after a transient network failure.
        public var retries = 2
        /// Backoff of failed accesses before they are retried (tests shorten it).
        var retryPolicy = RetryPolicy()
        /// The longest wait obeyed when the gallery answers `429` or `503` with a `Retry-After`: a longer one is
        /// cut to this, so a hostile or mistaken value cannot park the agent.
        public var maxRetryAfter: Duration = .seconds(3600)
        /// The most bytes per second all transfers together receive (`--bwlimit`); nil (the default) for no limit.
        public var bandwidthLimit: Int?
        /// The HTTP version asked of the gallery (`--http-version`), and so how transfers share connections.
        /// HTTP/1.1 on `concurrency` connections cost less CPU than HTTP/2 streams on one (docs/BENCHMARKS.md).
        public var version: HTTPVersion = .http1_1

        public init() {}
    }

    /// Where log lines go and how they are written (`--log-level`, `--log-file`, `--log-max-size`, `--log-keep`,
    /// `--log-format`, `--quiet`).
    public struct Log: Sendable {
        public var level: Logger.Level = .info
        /// The log file; nil means `DIR/.emojiart-sync/sync.log`.
        public var file: String?
        /// False: no log file at all (`--log-file none`, for those who read the journal); lines go to stderr only.
        public var writesFile = true
        /// When the log file rotates and how many old ones are kept (`--log-max-size`, `--log-keep`).
        public var rotation = LogSink.Rotation()
        /// How each log line is written: logfmt (default) or JSON.
        public var format: LogFormat = .logfmt
        /// Also log to stderr.
        public var toStandardError = true

        public init() {}
    }

    /// When the background agent polls, rescans and scrubs (`--interval`, `--scrub-interval`).
    public struct Schedule: Sendable {
        /// Seconds between feed polls in the background agent, before jitter (±10%).
        public var pollInterval: Duration = .seconds(60)
        /// One background scrub pass (every owned file re-read and re-hashed) per this long, spread evenly over
        /// it, at most 4 MiB/s; nil turns the background scrub off.
        public var scrubInterval: Duration? = Scrubber.defaultInterval
        /// How often to rescan when inotify cannot be used (watch or instance limit reached).
        var fallbackRescanInterval: Duration = .seconds(30)

        public init() {}
    }

    /// What protects the mirror (`--verify`, `--max-delete`).
    public struct Safety: Sendable {
        /// How much of a fetched image is checked before it replaces a file.
        public var verification: PNGVerification = .structure
        /// A poll that would delete more than this percentage of the agent's files (or finds an empty feed
        /// while the agent has files) deletes nothing until the user raises it: the guard against a broken
        /// gallery wiping the mirror. 100 turns the guard off.
        public var maxDeletePercent = 50

        public init() {}
    }
}
