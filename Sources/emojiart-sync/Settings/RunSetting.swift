import CurlHTTP
import FoundationEssentials

/// One setting of a sync run, named as its long option: what it is called in each place it can be given
/// (`--max-delete`, `EMOJIART_SYNC_MAX_DELETE`, `max-delete = ...` in the config file) and its default.
/// The one table `SettingsResolver`, `RunSettings` and `config` work from.
enum RunSetting: String, CaseIterable, Sendable {
    case dir
    case allowRootDir = "allow-root-dir"
    case server, once, interval
    case scrubInterval = "scrub-interval"
    case maxDelete = "max-delete"
    case concurrency
    case memoryLimit = "memory-limit"
    case verify
    case maxBodySize = "max-body-size"
    case retries
    case logFile = "log-file"
    case logMaxSize = "log-max-size"
    case logKeep = "log-keep"
    case logLevel = "log-level"
    case logFormat = "log-format"
    case quiet
    case metricsListen = "metrics-listen"
    case caCert = "ca-cert"
    case connectTimeout = "connect-timeout"
    case stallTimeout = "stall-timeout"
    case maxRetryAfter = "max-retry-after"
    case bwlimit
    case httpVersion = "http-version"

    var option: String { "--" + rawValue }

    /// `EMOJIART_SYNC_` and the option's name in capitals, dashes as underscores; this is also what
    /// swift-configuration's environment provider derives from the key `emojiart-sync.<name>`.
    var environmentVariable: String {
        "EMOJIART_SYNC_" + String(rawValue.uppercased().map { $0 == "-" ? "_" : $0 })
    }

    /// Whether the value names a file or directory, expanded as a shell would (`PathExpansion`).
    var isPath: Bool {
        switch self {
        case .dir, .logFile, .caCert: true
        default: false
        }
    }

    /// The default, as it would be written in the config file; nil when there is none (`dir`) or it is
    /// derived from another setting (`log-file`: DIR/.emojiart-sync/sync.log).
    var defaultValue: String? {
        switch self {
        case .dir, .logFile, .metricsListen, .caCert: nil
        case .server: "http://localhost:8080"
        case .once, .quiet, .allowRootDir: "false"
        case .interval: "60s"
        case .scrubInterval: "24h"
        case .maxDelete: "50"
        case .concurrency: "8"
        case .memoryLimit: "64M"
        case .verify: "structure"
        case .maxBodySize: "1G"
        case .retries: "2"
        case .logMaxSize: "16M"
        case .logKeep: "5"
        case .logLevel: "info"
        case .logFormat: "logfmt"
        case .connectTimeout: "10s"
        case .stallTimeout: "30s"
        case .maxRetryAfter: "1h"
        case .bwlimit: "off"
        case .httpVersion: HTTPVersion.http1_1.rawValue
        }
    }
}
