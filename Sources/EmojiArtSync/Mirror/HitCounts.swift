/// Accesses counted by the layer that served them: three counters, not a dictionary, since every access of a
/// pass (300,000 for a feed of 100,000 items) adds one.
struct HitCounts: Sendable, Equatable {
    private(set) var memory = 0
    private(set) var disk = 0
    private(set) var network = 0

    subscript(hit: Hit) -> Int {
        switch hit {
        case .memory: memory
        case .disk: disk
        case .network: network
        }
    }

    mutating func add(_ hit: Hit) {
        switch hit {
        case .memory: memory += 1
        case .disk: disk += 1
        case .network: network += 1
        }
    }
}
