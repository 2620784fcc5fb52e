import Synchronization

/// Random numbers for spreading retries and polls in time (jitter), never for anything secret: a SplitMix64
/// sequence, one per process, seeded once from the system's generator. Swift's `SystemRandomNumberGenerator` makes
/// a `getrandom` system call per number, and a cold pass drew one per failed item.
struct JitterRandom: RandomNumberGenerator {
    /// The sequence's position, shared by every caller: one atomic add per number.
    private static let position = Atomic<UInt64>(UInt64.random(in: 0...UInt64.max))

    mutating func next() -> UInt64 {
        var mixed = Self.position.wrappingAdd(0x9E37_79B9_7F4A_7C15, ordering: .relaxed).newValue
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// A number in `range`, drawn from the process's jitter sequence.
    static func number(in range: ClosedRange<Double>) -> Double {
        var generator = JitterRandom()
        return Double.random(in: range, using: &generator)
    }
}
