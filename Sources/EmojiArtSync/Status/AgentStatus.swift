import Foundation

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
        public var detail: String?
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
    public var wakeUps: Int?
    public var lastPoll: Poll?
    public var lastError: String?
    public var lastPurge: Purge?

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
    public func write(to path: String) throws {
        let data = try Self.encoder.encode(self)
        try data.write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    public static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    /// The human-readable form `emojiart-sync status` prints.
    public func humanReadable(now: Date = Date()) -> String {
        let uptime = Int(now.timeIntervalSince(startedAt))
        var lines = [
            "agent:      PID \(pid), \(state), up \(Self.duration(uptime))",
            "directory:  \(directory)",
            "server:     \(server)",
            "watching:   \(watching)",
            "assets:     \(assets.ok) ok, \(assets.missing) missing, \(assets.failing) failing (of \(assets.total) in the feed)",
            "hits:       memory \(hits.memory), disk \(hits.disk), network \(hits.network)",
            "repairs:    \(repairs)",
            "fetched:    \(ByteCount.format(bytesFetched)) (memory cache holds \(ByteCount.format(memoryBytes)))",
        ]
        if let lastPoll {
            let ago = Int(now.timeIntervalSince(lastPoll.at))
            lines.append("last poll:  \(lastPoll.result), \(Self.duration(ago)) ago" + (lastPoll.detail.map { " (\($0))" } ?? ""))
        } else {
            lines.append("last poll:  none yet")
        }
        lines.append("last error: \(lastError ?? "none")")
        if let lastPurge {
            lines.append("last purge: \(lastPurge.scope), \(lastPurge.entries) entries, \(ByteCount.format(lastPurge.bytes))")
        }
        return lines.joined(separator: "\n")
    }

    static func duration(_ seconds: Int) -> String {
        let s = max(0, seconds)
        if s < 60 { return "\(s)s" }
        if s < 3600 { return "\(s / 60)m\(s % 60)s" }
        if s < 86400 { return "\(s / 3600)h\(s % 3600 / 60)m" }
        return "\(s / 86400)d\(s % 86400 / 3600)h"
    }
}
