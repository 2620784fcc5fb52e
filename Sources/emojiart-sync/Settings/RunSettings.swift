import CurlHTTP
import EmojiArtPNG
import EmojiArtSync
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The resolved settings of a sync run, checked and typed: what `SettingsResolver` found, turned into an
/// `AgentConfiguration`. A bad value is a usage error that names where it came from
/// (`--concurrency must be 1...256 (EMOJIART_SYNC_CONCURRENCY=0)`).
struct RunSettings {
    var directory: String
    var server: ServerAddress
    var once: Bool
    /// Seconds between feed polls.
    var interval: Int
    /// Seconds per background scrub pass; 0: none.
    var scrubInterval: Int
    var maxDelete: Int
    var concurrency: Int
    var memoryLimit: Int
    var verify: PNGVerification
    var maxBodySize: Int
    var retries: Int
    var logFile: String?
    /// `--log-file none` (or `off`): no log file.
    var writesLogFile: Bool
    var logRotation: LogSink.Rotation
    var logLevel: Logger.Level
    var logFormat: LogFormat
    var quiet: Bool
    var metricsListen: MetricsListenAddress?
    var caCert: String?
    var connectTimeout: Duration
    var stallTimeout: Duration
    var maxRetryAfter: Duration
    /// Bytes per second for all transfers together; nil: no limit.
    var bwlimit: Int?
    var httpVersion: HTTPVersion

    init(_ resolver: SettingsResolver) throws(SettingsError) {
        func text(_ setting: RunSetting) throws(SettingsError) -> (value: String?, source: String) {
            let resolved = try resolver.resolve(setting)
            return (resolved.value, resolver.spelled(resolved.source, setting, resolved.value))
        }
        func integer(_ setting: RunSetting, _ range: ClosedRange<Int>, _ unit: String) throws(SettingsError) -> Int {
            let (value, source) = try text(setting)
            guard let value, let number = Int(value), range.contains(number) else {
                throw SettingsError("\(setting.option) must be \(range.lowerBound)...\(range.upperBound)\(unit) (\(source))")
            }
            return number
        }
        /// Whole seconds; `plainUnit` is what a bare number counts (1: seconds, 3600: hours).
        func duration(_ setting: RunSetting, _ range: ClosedRange<Int>, plainUnit: Int) throws(SettingsError) -> Int {
            let (value, source) = try text(setting)
            guard let value, let seconds = DurationText.seconds(value, plainUnit: plainUnit), range.contains(seconds) else {
                throw SettingsError("\(setting.option) \(DurationText.expected(range, plainUnit: plainUnit)) (\(source))")
            }
            return seconds
        }
        func size(_ setting: RunSetting, minimum: Int) throws(SettingsError) -> Int {
            let (value, source) = try text(setting)
            guard let value, let bytes = ByteCount.parse(value) else {
                throw SettingsError("\(setting.option): cannot read \"\(value ?? "")\" as a size (\(source))")
            }
            guard bytes >= minimum else {
                throw SettingsError("\(setting.option) must be at least \(ByteCount.format(minimum)) (\(source))")
            }
            return bytes
        }
        func duration(_ setting: RunSetting, _ range: ClosedRange<Duration>, _ bounds: String) throws(SettingsError) -> Duration {
            let (value, source) = try text(setting)
            guard let value, let parsed = DurationText.duration(value), range.contains(parsed) else {
                throw SettingsError("\(setting.option) must be a duration of \(bounds), e.g. 10s, 1m30s (\(source))")
            }
            return parsed
        }
        func boolean(_ setting: RunSetting) throws(SettingsError) -> Bool {
            let (value, source) = try text(setting)
            switch value?.lowercased() {
            case "1", "true", "yes", "on": return true
            case nil, "0", "false", "no", "off", "": return false
            default: throw SettingsError("\(setting.option): expected true or false (\(source))")
            }
        }
        func choice<T: RawRepresentable>(_ setting: RunSetting, _ type: T.Type, _ known: [String]) throws(SettingsError) -> T where T.RawValue == String {
            let (value, source) = try text(setting)
            guard let value, let parsed = T(rawValue: value) else {
                throw SettingsError("\(setting.option): unknown value \"\(value ?? "")\", expected \(known.joined(separator: ", ")) (\(source))")
            }
            return parsed
        }

        directory = try Self.directory(resolver)
        if try !boolean(.allowRootDir), let refusal = DirectoryGuard.refusal(directory, home: DirectoryGuard.home()) {
            throw SettingsError("--dir \(directory): refusing to sync there: \(refusal); the agent would write its files and .emojiart-sync/ into it (--allow-root-dir if you mean it)")
        }
        let (serverText, serverSource) = try text(.server)
        do {
            server = try ServerAddress(serverText ?? "")
        } catch {
            throw SettingsError("--server: \(error) (\(serverSource))")
        }
        once = try boolean(.once)
        interval = try duration(.interval, 1...86_400, plainUnit: 1)
        scrubInterval = try duration(.scrubInterval, 0...365 * 86_400, plainUnit: 3_600)
        maxDelete = try integer(.maxDelete, 0...100, "")
        concurrency = try integer(.concurrency, 1...256, "")
        memoryLimit = try size(.memoryLimit, minimum: 0)
        verify = try choice(.verify, PNGVerification.self, PNGVerification.allCases.map(\.rawValue))
        maxBodySize = try size(.maxBodySize, minimum: 1)
        retries = try integer(.retries, 0...10, "")
        (logFile, writesLogFile) = try Self.logFile(text(.logFile))
        logRotation = LogSink.Rotation(
            maxBytes: try size(.logMaxSize, minimum: LogSink.Rotation.smallestMaxBytes),
            keep: try integer(.logKeep, 1...100, ""))
        logLevel = try choice(.logLevel, Logger.Level.self, Logger.Level.allCases.map(\.rawValue))
        logFormat = try choice(.logFormat, LogFormat.self, LogFormat.allCases.map(\.rawValue))
        quiet = try boolean(.quiet)
        let (listen, listenSource) = try text(.metricsListen)
        if let listen, !listen.isEmpty {
            guard let address = MetricsListenAddress(listen) else {
                throw SettingsError("--metrics-listen: cannot read \"\(listen)\" as HOST:PORT, e.g. 127.0.0.1:9464 (\(listenSource))")
            }
            metricsListen = address
        } else {
            metricsListen = nil
        }
        connectTimeout = try duration(.connectTimeout, .milliseconds(100)...(.seconds(600)), "100ms...10m")
        stallTimeout = try duration(.stallTimeout, .seconds(1)...(.seconds(3600)), "1s...1h")
        maxRetryAfter = try duration(.maxRetryAfter, .zero...(.seconds(86_400)), "0s...1d")
        bwlimit = try Self.rate(text(.bwlimit))
        httpVersion = try choice(.httpVersion, HTTPVersion.self, HTTPVersion.allCases.map(\.rawValue))
        let (caCert, caCertSource) = try text(.caCert)
        if let caCert, !caCert.isEmpty {
            if let problem = Self.unreadableFileProblem(caCert) {
                throw SettingsError("--ca-cert: cannot read \(caCert): \(problem) (\(caCertSource))")
            }
            self.caCert = caCert
        } else {
            self.caCert = nil
        }
    }

    /// The log file's path (nil: the default, DIR/.emojiart-sync/sync.log) and whether there is one: `none` and
    /// `off` turn it off; `-` is refused, since standard error gets the lines already unless `--quiet`.
    private static func logFile(_ given: (value: String?, source: String)) throws(SettingsError) -> (String?, Bool) {
        switch given.value {
        case nil, "": return (nil, true)
        case "none", "off": return (nil, false)
        case "-":
            throw SettingsError("--log-file: \"-\" is not a file; log lines go to standard error unless --quiet, and --log-file none writes no file (\(given.source))")
        case let path?: return (path, true)
        }
    }

    /// The smallest `--bwlimit`: below it a gallery image would take most of a minute.
    static let smallestRate = 1024

    /// `--bwlimit`'s value: `off` (or 0) for no limit, else bytes per second as a size (`512k`, `10M`: binary
    /// units, as rclone writes them; a plain number is bytes), at least ``smallestRate``.
    private static func rate(_ given: (value: String?, source: String)) throws(SettingsError) -> Int? {
        let text = given.value ?? "off"
        if text.lowercased() == "off" { return nil }
        guard let rate = ByteCount.parse(text), rate == 0 || rate >= smallestRate else {
            throw SettingsError(
                "\(RunSetting.bwlimit.option): cannot read \"\(text)\" as a rate of at least 1k bytes per second, "
                    + "e.g. 512k, 10M, or off (\(given.source))")
        }
        return rate == 0 ? nil : rate
    }

    /// Why `path` cannot be read as a file (`No such file or directory`, `not a regular file`), or nil.
    private static func unreadableFileProblem(_ path: String) -> String? {
        var info = stat()
        if stat(path, &info) != 0 { return String(cString: strerror(errno)) }
        if info.st_mode & S_IFMT != S_IFREG { return "not a regular file" }
        if access(path, R_OK) != 0 { return String(cString: strerror(errno)) }
        return nil
    }

    /// DIR as every command finds it (a run, `status`, `purge`, `scrub`): `--dir`, `EMOJIART_SYNC_DIR`, or
    /// `dir = ...` in the config file, expanded as a shell would. Missing everywhere is an error saying where
    /// it can be given.
    static func directory(_ resolver: SettingsResolver) throws(SettingsError) -> String {
        guard let dir = try resolver.resolve(.dir).value, !dir.isEmpty else {
            throw SettingsError("missing --dir DIR: the directory to keep in sync (or \(RunSetting.dir.environmentVariable), or dir = ... in \(resolver.configFile))")
        }
        return dir
    }

    /// The agent's configuration. Log lines go to stderr unless `--quiet`, or unless a progress line is
    /// drawn there instead (`drawsProgress`: `--once` on a terminal).
    func agentConfiguration(drawsProgress: Bool) -> AgentConfiguration {
        var configuration = AgentConfiguration(directory: SyncDirectory(directory))
        configuration.memoryLimit = memoryLimit
        configuration.metricsListen = metricsListen
        configuration.http.server = server
        configuration.http.concurrency = concurrency
        configuration.http.maxBodySize = maxBodySize
        configuration.http.connectTimeout = connectTimeout
        configuration.http.stallTimeout = stallTimeout
        configuration.http.caCertificateFile = caCert
        configuration.http.retries = retries
        configuration.http.maxRetryAfter = maxRetryAfter
        configuration.http.bandwidthLimit = bwlimit
        configuration.http.version = httpVersion
        configuration.logging.level = logLevel
        configuration.logging.file = logFile
        configuration.logging.writesFile = writesLogFile
        configuration.logging.rotation = logRotation
        configuration.logging.format = logFormat
        configuration.logging.toStandardError = !quiet && !drawsProgress
        configuration.schedule.pollInterval = .seconds(interval)
        configuration.schedule.scrubInterval = scrubInterval == 0 ? nil : .seconds(scrubInterval)
        configuration.safety.verification = verify
        configuration.safety.maxDeletePercent = maxDelete
        return configuration
    }
}
