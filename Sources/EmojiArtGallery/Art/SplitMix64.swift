/// A small, fast, seedable pseudo-random generator (SplitMix64, Steele, Lea and Flood 2014).
///
/// Used where the gallery needs randomness that is the same on every run: the images' grain and
/// layout, and the endless fault's garbage. Not for anything secret. The same seed always yields
/// the same sequence on every platform, which is what makes the images byte-for-byte
/// reproducible across servers.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    /// Starts the sequence at `seed`.
    init(seed: UInt64) {
        state = seed
    }

    /// Seeds from several values (e.g. N and a generation) so that nearby inputs give unrelated
    /// sequences.
    init(mixing values: Int...) {
        var generator = SplitMix64(seed: 0x9E37_79B9_7F4A_7C15)
        var seed: UInt64 = 0
        for value in values {
            seed = (seed ^ UInt64(bitPattern: Int64(value))) &* 0xBF58_476D_1CE4_E5B9
            seed ^= generator.next()
        }
        state = seed
    }

    /// The next 64 random bits.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `range`, deterministic for this generator's state. Unlike
    /// `Int.random(in:using:)`, whose algorithm the standard library may change, this one is
    /// fixed, so images never change with a toolchain upgrade.
    mutating func next(in range: ClosedRange<Int>) -> Int {
        let span = UInt64(range.upperBound - range.lowerBound) + 1
        return range.lowerBound + Int(next() % span)
    }
}
