import Logging

/// Re-reads and re-hashes every file the agent owns, a little at a time, so that bit rot which leaves a file's
/// `lstat` fingerprint alone (and so would be trusted by a warm start) is still found and repaired.
///
/// The pace is bounded two ways: one full pass per `interval` (default a day) spread evenly over it, and
/// never more than `bytesPerSecond` read (default 4 MiB/s). The agent runs a step a minute; `emojiart-sync
/// scrub` runs a whole pass at once. Lives in the `SyncActor` silo with the index whose files it reads; the
/// reads themselves happen on the blocking-I/O pool.
@SyncActor
public final class Scrubber {
    nonisolated static let defaultInterval: Duration = .seconds(24 * 3600)
    nonisolated static let defaultBytesPerSecond = 4 * 1024 * 1024
    /// How often the agent runs a step.
    nonisolated static let stepPeriod: Duration = .seconds(60)

    private let core: MirrorCore
    private let logger: Logger
    let interval: Duration
    let bytesPerSecond: Int
    /// The last name scrubbed in the current pass ("" at the start of a pass).
    private var cursor = ""
    private var passFiles = 0
    private var passDamaged = 0
    private var passStarted = ContinuousClock.now

    init(core: MirrorCore, interval: Duration = defaultInterval, bytesPerSecond: Int = defaultBytesPerSecond, logger: Logger) {
        self.core = core
        self.interval = interval
        self.bytesPerSecond = max(1, bytesPerSecond)
        self.logger = logger
    }

    /// What one step or pass found.
    public struct Findings: Sendable, Equatable {
        public var files = 0
        public var bytes = 0
        public var damaged: [(key: AssetKey, reason: DamageReason)] = []
        var passCompleted = false

        public static func == (lhs: Findings, rhs: Findings) -> Bool {
            lhs.files == rhs.files && lhs.bytes == rhs.bytes && lhs.passCompleted == rhs.passCompleted
                && lhs.damaged.map(\.key) == rhs.damaged.map(\.key)
        }
    }

    /// One step: the share of the pass that falls in `stepPeriod`, within the byte budget of that period.
    func step() async -> Findings {
        let owned = max(1, core.owned.count)
        let periods = max(1.0, interval / Self.stepPeriod)
        let files = max(1, Int((Double(owned) / periods).rounded(.up)))
        return await scrub(maxFiles: files, maxBytes: Int(Double(bytesPerSecond) * Self.stepPeriod.seconds))
    }

    /// A whole pass now, from the first file to the last, at full speed (`emojiart-sync scrub`).
    func fullPass() async -> Findings {
        // A pass of its own from the first file: the background pass under way starts over after it.
        (cursor, passFiles, passDamaged, passStarted) = ("", 0, 0, .now)
        var total = Findings()
        while !Task.isCancelled {
            let found = await scrub(maxFiles: 256, maxBytes: .max)
            total.files += found.files
            total.bytes += found.bytes
            total.damaged += found.damaged
            if found.passCompleted || found.files == 0 {
                total.passCompleted = true
                break
            }
        }
        return total
    }

    private func scrub(maxFiles: Int, maxBytes: Int) async -> Findings {
        var found = Findings()
        while found.files < maxFiles, found.bytes < maxBytes, !Task.isCancelled {
            let page: [(name: String, size: Int)]
            do {
                page = try core.index.names(after: cursor, limit: min(256, maxFiles - found.files))
            } catch {
                logger.warning("scrub paused: index unreadable", metadata: ["event": "scrub", "error": .string(error.message)])
                break  // the next step starts where this one stopped
            }
            guard !page.isEmpty else {
                finishPass()
                found.passCompleted = true
                break
            }
            for (name, size) in page {
                cursor = name
                found.files += 1
                passFiles += 1  // counted as it goes: the page that finds the end logs the pass before this returns
                found.bytes += size
                do {
                    if case .damaged(let reason) = try await core.inspector.scrub(fileNamed: name),
                        let key = try core.owned.key(forFileNamed: name)
                    {
                        found.damaged.append((key, reason))
                        passDamaged += 1
                    }
                } catch {
                    logger.warning("scrub could not check a file", metadata: [
                        "event": "scrub", "file": .string(name), "error": .string(error.message),
                    ])
                }
                if found.bytes >= maxBytes { break }
            }
        }
        return found
    }

    private func finishPass() {
        logger.info("scrub pass done", metadata: [
            "event": "scrub", "files": .stringConvertible(passFiles), "damaged": .stringConvertible(passDamaged),
            "ms": .stringConvertible((ContinuousClock.now - passStarted).milliseconds),
        ])
        cursor = ""
        passFiles = 0
        passDamaged = 0
        passStarted = .now
    }
}
