import FoundationEssentials
import Glibc
import SystemPackage

/// What a running agent publishes about itself in `DIR/.emojiart-sync/status.json`, and what
/// `emojiart-sync status` prints. A plain value: the agent builds it on its actor and writes it atomically.
public struct AgentStatus: Codable, Sendable, Equatable {
    public struct Assets: Codable, Sendable, Equatable {
        /// Distinct assets in the last feed.
        public var total = 0
        /// On disk, the agent's, and intact as far as the agent knows.
        public var ok = 0
        /// In the feed but not on disk (being fetched, or waiting for a retry).
        public var missing = 0
        /// Whose last access failed and that wait for a retry.
        public var failing = 0
        public init() {}
    }

    public struct Hits: Codable, Sendable, Equatable {
        public var memory = 0
        public var disk = 0
        public var network = 0
        public init() {}
    }

    public struct Poll: Codable, Sendable, Equatable {
        public var at: Date
        /// `ok`, `failed`, or `refused` (the deletion guard held).
        public var result: String
        var detail: String?

        public init(at: Date, result: String, detail: String? = nil) {
            self.at = at
            self.result = result
            self.detail = detail
        }
    }

    public struct Purge: Codable, Sendable, Equatable {
        /// Increases by one per purge, so `emojiart-sync purge` can tell its own from an older one.
        public var sequence: Int
        public var scope: String
        public var entries: Int
        public var bytes: Int
        public var at: Date
        /// Why the purge was not done (a disk purge sent to a `--once` run); nil when it was.
        public var refused: String? = nil

        public init(sequence: Int, scope: String, entries: Int, bytes: Int, at: Date, refused: String? = nil) {
            self.sequence = sequence
            self.scope = scope
            self.entries = entries
            self.bytes = bytes
            self.at = at
            self.refused = refused
        }
    }

    /// A scrub a command asked for (`emojiart-sync scrub` while the agent runs), once its pass is done.
    public struct Scrub: Codable, Sendable, Equatable {
        /// Increases by one per scrub asked for, so `emojiart-sync scrub` can tell its own from an older one.
        public var sequence: Int
        public var files: Int
        public var bytes: Int
        /// The files found damaged (repaired next, as `event=repair` lines say).
        public var damaged: [String]
        public var at: Date

        public init(sequence: Int, files: Int, bytes: Int, damaged: [String], at: Date) {
            (self.sequence, self.files, self.bytes, self.damaged, self.at) = (sequence, files, bytes, damaged, at)
        }
    }

    /// A file that was not the agent's, found at an asset path and kept under a conflict name beside it, so the
    /// agent could store its asset (`NAME.conflict-YYYYMMDD-HHMMSS.png`).
    struct MovedAside: Codable, Sendable, Equatable {
        /// The asset's file name, and the name the file that was there got (both in DIR).
        var file: String
        var movedTo: String
        var at: Date

        init(file: String, movedTo: String, at: Date) {
            self.file = file
            self.movedTo = movedTo
            self.at = at
        }
    }

    /// A wait the gallery asked for (`Retry-After` on a `429` or `503`) that is not over yet.
    public struct Waiting: Codable, Sendable, Equatable {
        /// `gallery` (the feed asked: polls and images wait) or `urls` (that many images wait).
        public var scope: String
        var urls: Int
        /// The status that asked, 429 or 503.
        public var status: Int
        /// When the (last) wait is over.
        public var until: Date

        public init(scope: String, urls: Int, status: Int, until: Date) {
            self.scope = scope
            self.urls = urls
            self.status = status
            self.until = until
        }
    }

    public var pid: Int32
    public var startedAt: Date
    public var updatedAt: Date
    /// `running` or `stopped`.
    public var state: String
    public var directory: String
    public var server: String
    /// `inotify`, or `polling` when inotify could not be used.
    public var watching: String
    public var assets = Assets()
    public var hits = Hits()
    public var repairs = 0
    public var bytesFetched = 0
    public var memoryBytes = 0
    /// Files in the agent's index.
    public var indexFiles: Int?
    /// How many times the agent's scheduler woke up to run due work: flat while the agent is idle.
    var wakeUps: Int?
    public var lastPoll: Poll?
    public var lastError: String?
    public var lastPurge: Purge?
    public var lastScrub: Scrub?
    /// The last file moved aside (nil: none since the agent started).
    var lastMovedAside: MovedAside?
    /// When the agent polls the feed next, as it planned it when this status was written: the whole second at or
    /// after it. The file keeps whole seconds (ISO 8601), and a time cut to its second read as past up to a second
    /// early: during a short backoff `status` said "due now" while the agent was still waiting.
    public var nextPoll: Date? {
        didSet { nextPoll = nextPoll.map { Date(timeIntervalSince1970: $0.timeIntervalSince1970.rounded(.up)) } }
    }
    /// The agent's log file (`status --watch` shows its last events from it).
    public var logFile: String?
    /// What the agent waits for because the gallery asked it to (`Retry-After`); nil when nothing.
    public var waiting: Waiting?

    public init(pid: Int32, startedAt: Date, directory: String, server: String) {
        self.pid = pid
        self.startedAt = startedAt
        self.updatedAt = startedAt
        self.state = "running"
        self.directory = directory
        self.server = server
        self.watching = "inotify"
    }

    /// Reads a status file.
    public static func read(from path: String) throws -> AgentStatus {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try Self.decoder.decode(AgentStatus.self, from: data)
    }

    /// Writes the status atomically next to `path` (temporary file in the same directory, then rename).
    /// A failure the system reported with an errno throws a `SyncError` naming the path and the errno's text
    /// (`Read-only file system`), not Foundation's description of it.
    public func write(to path: String) throws {
        let data = try Self.encoder.encode(self)
        // Through a temporary name and a rename, so a reader never sees half a status.
        let temporary = path + ".tmp-\(getpid())"
        do {
            let file = try FileDescriptor.open(
                FilePath(temporary), .writeOnly, options: [.create, .truncate, .closeOnExec],
                permissions: [.ownerReadWrite, .groupRead, .otherRead])
            try file.closeAfter { _ = try file.writeAll(data) }
            guard rename(temporary, path) == 0 else { throw Errno(rawValue: errno) }
        } catch let error as Errno {
            unlink(temporary)
            throw SyncError(
                .system, "cannot write the status file \(path): \(String(cString: strerror(error.rawValue))) (errno \(error.rawValue))",
                errno: error.rawValue, path: path, underlying: error)
        }
    }

    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        // URLs and paths stay readable (`http://...`, not `http:\/\/...`).
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    public static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    /// The human-readable form `emojiart-sync status` prints: one `key: value` line per fact, the values
    /// aligned in one column, sizes in KiB/MiB, times as "3m05s ago" with the local clock time.
    public func humanReadable(now: Date = Date()) -> String {
        var rows: [(String, String)] = [
            ("agent", agentSummary(now: now)),
            ("directory", directory),
            ("server", server),
            ("watching", watching),
            ("assets", "\(assets.ok) ok, \(assets.missing) missing, \(assets.failing) failing (of \(assets.total) in the feed)"),
            ("hits", "memory \(hits.memory), disk \(hits.disk), network \(hits.network)"),
            ("repairs", "\(repairs)"),
            ("fetched", ByteCount.format(bytesFetched)),
            ("memory cache", ByteCount.format(memoryBytes)),
        ]
        if let lastPoll {
            rows.append(("last poll", "\(lastPoll.result), \(Self.ago(lastPoll.at, now: now))" + (lastPoll.detail.map { " (\($0))" } ?? "")))
        } else {
            rows.append(("last poll", "none yet"))
        }
        if state == "running", let nextPoll {
            rows.append(("next poll", nextPoll > now ? "in \(Self.duration(Int(nextPoll.timeIntervalSince(now).rounded(.up)))) (\(Self.clockTime(nextPoll)))" : "due now"))
        }
        rows.append(("last error", lastError ?? "none"))
        if let waiting, waiting.until > now {
            let what = waiting.scope == "gallery"
                ? "the whole gallery (the feed answered HTTP \(waiting.status) with Retry-After)"
                : "\(waiting.urls) image\(waiting.urls == 1 ? "" : "s") (HTTP \(waiting.status) with Retry-After)"
            let left = Self.duration(Int(waiting.until.timeIntervalSince(now).rounded(.up)))
            rows.append(("waiting", "\(what) until \(Self.clockTime(waiting.until)), \(left) from now"))
        }
        if let lastPurge {
            rows.append(("last purge", "\(lastPurge.scope), \(lastPurge.entries) entries, \(ByteCount.format(lastPurge.bytes)), \(Self.ago(lastPurge.at, now: now))"))
        }
        if let lastScrub {
            rows.append(("last scrub", "\(lastScrub.files) files, \(ByteCount.format(lastScrub.bytes)), \(lastScrub.damaged.count) damaged, \(Self.ago(lastScrub.at, now: now))"))
        }
        if let lastMovedAside {
            rows.append(("moved aside", "\(lastMovedAside.file) was not the agent's: kept as \(lastMovedAside.movedTo), \(Self.ago(lastMovedAside.at, now: now))"))
        }
        rows.append(("updated", Self.ago(updatedAt, now: now)))
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { key, value in
            PlainText.padded(key + ":", to: width + 2) + value
        }.joined(separator: "\n")
    }

    /// `PID 42, running, up 1h2m (since ...)`; a stopped agent's last status says when it stopped and how long
    /// it had run (its `updatedAt` is the moment it stopped).
    private func agentSummary(now: Date) -> String {
        let started = Self.clockTime(startedAt)
        guard state == "stopped" else {
            return "PID \(pid), \(state), up \(Self.duration(Int(now.timeIntervalSince(startedAt)))) (since \(started))"
        }
        let ran = Self.duration(Int(updatedAt.timeIntervalSince(startedAt)))
        return "PID \(pid), stopped \(Self.ago(updatedAt, now: now)) after running \(ran) (since \(started))"
    }

    /// `12s ago (14:03:07)`.
    package static func ago(_ date: Date, now: Date) -> String {
        "\(duration(Int(now.timeIntervalSince(date)))) ago (\(clockTime(date)))"
    }

    /// Local wall-clock time, `2026-11-22 14:03:07`.
    package static func clockTime(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        let date = [Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday)]
        let time = [Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec)]
        return date.map { PlainText.zeroPadded($0, width: 2) }.joined(separator: "-") + " "
            + time.map { PlainText.zeroPadded($0, width: 2) }.joined(separator: ":")
    }

    package static func duration(_ seconds: Int) -> String {
        let s = max(0, seconds)
        if s < 60 { return "\(s)s" }
        if s < 3600 { return "\(s / 60)m\(s % 60)s" }
        if s < 86400 { return "\(s / 3600)h\(s % 3600 / 60)m" }
        return "\(s / 86400)d\(s % 86400 / 3600)h"
    }
}
