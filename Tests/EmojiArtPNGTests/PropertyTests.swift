import EmojiArtPNG
import Testing

/// Exhaustive damage to small real images: every prefix, every single-bit flip. Nothing may pass,
/// nothing may crash, and the kind must fit the damage.
@Suite("PNGValidator properties over every truncation and bit flip", .timeLimit(.minutes(1)))
struct PropertyTests {
    static let images = ["rgba", "palette", "interlaced"]

    /// The small real image each argument names, made when its test runs (a failure to make it fails that test).
    static func image(_ name: String) throws -> [UInt8] {
        switch name {
        case "rgba": try TestImages.encoded(width: 24, height: 16, format: .rgba, seed: 21)
        case "palette": try TestImages.encoded(width: 20, height: 12, format: .palette, seed: 22)
        case "interlaced": try TestImages.handBuiltRGB(width: 13, height: 11, interlaced: true, seed: 23)
        default: throw TestImages.EncodingFailure("no test image is named \(name)")
        }
    }

    @Test("every truncation throws truncated, or missingIEND exactly at a chunk boundary",
          arguments: images)
    func everyTruncation(name: String) throws {
        let bytes = try Self.image(name)
        #expect(defect(bytes, level: .full) == nil, "the intact image is valid")
        let boundaries = Set(ChunkLocation.all(in: bytes).map(\.offset))
        for count in 0..<bytes.count {
            let prefix = Array(bytes.prefix(count))
            for level in PNGVerification.allCases {
                guard let found = defect(prefix, level: level) else {
                    Issue.record("a \(count)-byte prefix of \(bytes.count) passed \(level)")
                    continue
                }
                let expected: PNGDefect.Kind = boundaries.contains(count) && count > 8 ? .missingIEND : .truncated
                #expect(found.kind == expected, "prefix of \(count) bytes: \(found)")
            }
        }
    }

    @Test("every single-bit flip is caught by the structure check", arguments: images)
    func everyBitFlip(name: String) throws {
        let bytes = try Self.image(name)
        var damaged = bytes
        for index in bytes.indices {
            for bit in 0..<8 {
                damaged[index] ^= 1 << bit
                if let found = defect(damaged) {
                    if index < 8 { #expect(found.kind == .notPNG, "byte \(index) bit \(bit): \(found)") }
                } else {
                    Issue.record("flipping bit \(bit) of byte \(index) went unnoticed")
                }
                damaged[index] = bytes[index]
            }
        }
    }
}
