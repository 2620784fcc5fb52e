import CurlHTTP
import FoundationEssentials
import Glibc
import Metrics

/// The agent's Prometheus metrics, recorded through swift-metrics: one method per event the agent counts.
///
/// Owns the metric handles, made once from the factory it is given (never from the process-global
/// `MetricsSystem`, so several agents, or tests, in one process each keep their own). `SyncMetrics.off`
/// uses swift-metrics' no-op handler: that is the default, and costs one empty call per event. The names
/// and labels are the ones the man page lists under `--metrics-listen`.
struct SyncMetrics: Sendable {
    /// What kind of failure an `emojiart_sync_failures_total` sample counts (label `kind`).
    enum FailureKind: String, Sendable, CaseIterable {
        /// The gallery did not answer usably: refused, timed out, a bad status, truncated, too large.
        case network
        /// The body was not a valid PNG (the book's server answers `200` with JSON for missing images).
        case invalidImage = "invalid_image"
        /// A file the agent does not own sits at the asset's path.
        case conflict
        /// A system call failed (disk full, permissions).
        case system
        /// Anything else, transfers abandoned at shutdown among them.
        case other

        /// The kind of `error`, as thrown by an asset access.
        init(of error: any Error) {
            switch error {
            case let error as HTTPClientError: self = error.kind == .cancelled ? .other : .network
            case let error as SyncError:
                switch error.code {
                case .server: self = .network
                case .invalidImage: self = .invalidImage
                case .conflict: self = .conflict
                case .system: self = .system
                case .feed, .locked, .configuration: self = .other
                }
            default: self = .other
            }
        }
    }

    /// Each metric's `# HELP` text, by name: what the man page's METRICS section says, in one line.
    static let help: [String: String] = [
        "emojiart_sync_hits_total": "Asset accesses by the layer that served them (one per hit= log line, and the repeats= of each event=pass line).",
        "emojiart_sync_repairs_total": "Damaged files re-fetched (one per event=repair log line).",
        "emojiart_sync_bytes_fetched_total": "Bytes of asset bodies received from the gallery, valid or not.",
        "emojiart_sync_failures_total": "Failed loads of an asset (a transfer, disk read or store), one per load.",
        "emojiart_sync_fetch_duration_seconds": "Asset transfer times, retries included, one sample per body received.",
        "emojiart_sync_assets": "Assets of the last feed by state, as status shows them.",
        "emojiart_sync_index_files": "Files recorded in the index (the agent's own files).",
        "emojiart_sync_polls_total": "Feed polls by result: ok (changed), not_modified (304), refused (deletion guard), failed.",
        "emojiart_sync_last_poll_success_timestamp_seconds": "When the feed was last fetched (changed or not), in seconds since the epoch.",
        "emojiart_sync_build_info": "The running build: its version and commit (always 1).",
    ]

    /// How a feed poll ended (label `result` of `emojiart_sync_polls_total`).
    enum PollResult: String, Sendable, CaseIterable {
        /// A changed feed, taken.
        case ok
        /// `304 Not Modified`.
        case notModified = "not_modified"
        /// A changed feed whose deletions the guard refused (`--max-delete`).
        case refused
        /// The feed could not be fetched or read.
        case failed
    }

    /// Metrics that go nowhere (swift-metrics' no-op backend): the agent without `--metrics-listen`.
    static let off = SyncMetrics(factory: NOOPMetricsHandler.instance)

    /// One per `Hit`, each its own property: every access counts one, so no dictionary is hashed for it.
    private let memoryHits: Counter
    private let diskHits: Counter
    private let networkHits: Counter
    private let repairs: [String: Counter]
    private let failures: [FailureKind: Counter]
    private let bytesFetched: Counter
    private let fetchDuration: Timer
    private let assetsOK: Gauge
    private let assetsMissing: Gauge
    private let assetsFailing: Gauge
    private let indexFiles: Gauge
    private let polls: [PollResult: Counter]
    private let lastPollSuccess: Gauge

    /// Makes every handle from `factory` (a `PrometheusMetricsFactory` on the endpoint's registry, say).
    init(factory: any MetricsFactory) {
        func hits(_ source: Hit) -> Counter {
            Counter(label: "emojiart_sync_hits_total", dimensions: [("source", source.rawValue)], factory: factory)
        }
        memoryHits = hits(.memory)
        diskHits = hits(.disk)
        networkHits = hits(.network)
        repairs = Dictionary(uniqueKeysWithValues: ["missing", "corrupt"].map {
            ($0, Counter(label: "emojiart_sync_repairs_total", dimensions: [("reason", $0)], factory: factory))
        })
        failures = Dictionary(uniqueKeysWithValues: FailureKind.allCases.map {
            ($0, Counter(label: "emojiart_sync_failures_total", dimensions: [("kind", $0.rawValue)], factory: factory))
        })
        bytesFetched = Counter(label: "emojiart_sync_bytes_fetched_total", factory: factory)
        fetchDuration = Timer(label: "emojiart_sync_fetch_duration_seconds", factory: factory)
        func assets(_ state: String) -> Gauge {
            Gauge(label: "emojiart_sync_assets", dimensions: [("state", state)], factory: factory)
        }
        assetsOK = assets("ok")
        assetsMissing = assets("missing")
        assetsFailing = assets("failing")
        indexFiles = Gauge(label: "emojiart_sync_index_files", factory: factory)
        polls = Dictionary(uniqueKeysWithValues: PollResult.allCases.map {
            ($0, Counter(label: "emojiart_sync_polls_total", dimensions: [("result", $0.rawValue)], factory: factory))
        })
        lastPollSuccess = Gauge(label: "emojiart_sync_last_poll_success_timestamp_seconds", factory: factory)
        Gauge(label: "emojiart_sync_build_info", dimensions: [
            ("version", EmojiArtSyncVersion.current), ("commit", EmojiArtSyncVersion.commit ?? "unknown"),
        ], factory: factory).record(1)
    }

    /// A feed poll that ended with `result`; any but `failed` reached the gallery, and stamps the last success.
    func poll(_ result: PollResult, at date: Date = Date()) {
        polls[result]?.increment()
        if result != .failed { lastPollSuccess.record(date.timeIntervalSince1970) }
    }

    /// An access served from `source` (one `hit=` log line).
    func hit(_ source: Hit) {
        switch source {
        case .memory: memoryHits.increment()
        case .disk: diskHits.increment()
        case .network: networkHits.increment()
        }
    }

    /// A damaged file about to be re-fetched (one `event=repair` log line); `reason` is `missing` or `corrupt`.
    func repair(_ reason: String) {
        repairs[reason]?.increment()
    }

    /// An asset body received from the gallery, valid or not, and how long its transfer (retries included) took.
    func fetched(bytes: Int, duration: Duration) {
        bytesFetched.increment(by: bytes)
        fetchDuration.record(duration: duration)
    }

    /// A load that failed: once per fetch, disk read or store that failed, however many accesses waited for it
    /// (each of those logs its own `result=failed` line).
    func failure(_ error: any Error) {
        failures[FailureKind(of: error)]?.increment()
    }

    /// The published status's asset counts and the number of files in the index.
    func observe(_ status: AgentStatus, indexFiles files: Int) {
        assetsOK.record(status.assets.ok)
        assetsMissing.record(status.assets.missing)
        assetsFailing.record(status.assets.failing)
        indexFiles.record(files)
    }
}
