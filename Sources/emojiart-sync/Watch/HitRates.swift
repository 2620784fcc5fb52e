import EmojiArtSync
import FoundationEssentials

/// Hits per second by source, over the last few seconds of samples of the agent's counters: what
/// `emojiart-sync status --watch` shows next to each total. A plain value; the caller adds a sample per redraw.
public struct HitRates: Sendable {
    /// Per second, for each source.
    public struct Rates: Sendable, Equatable {
        public var memory: Double
        public var disk: Double
        public var network: Double

        public init(memory: Double, disk: Double, network: Double) {
            self.memory = memory
            self.disk = disk
            self.network = network
        }
    }

    /// How far back the rate looks: long enough to smooth a burst, short enough to follow a change.
    public let window: TimeInterval
    private var samples: [(at: Date, hits: AgentStatus.Hits)] = []

    public init(window: TimeInterval = 5) {
        self.window = window
    }

    /// Adds the counters as read at `at`. Counters that went down (a new agent started, at 0) start over.
    public mutating func add(_ hits: AgentStatus.Hits, at: Date) {
        if let last = samples.last?.hits,
            hits.memory < last.memory || hits.disk < last.disk || hits.network < last.network
        {
            samples.removeAll()
        }
        samples.append((at, hits))
        while let first = samples.first, at.timeIntervalSince(first.at) > window, samples.count > 2 {
            samples.removeFirst()
        }
    }

    /// The rates over the samples kept; zero until two samples at different times exist.
    public var rates: Rates {
        guard let first = samples.first, let last = samples.last else { return Rates(memory: 0, disk: 0, network: 0) }
        let seconds = last.at.timeIntervalSince(first.at)
        guard seconds > 0 else { return Rates(memory: 0, disk: 0, network: 0) }
        return Rates(
            memory: Double(last.hits.memory - first.hits.memory) / seconds,
            disk: Double(last.hits.disk - first.hits.disk) / seconds,
            network: Double(last.hits.network - first.hits.network) / seconds)
    }
}
