import EmojiArtPNG
import Testing

/// The module's own encoder and validator agree: what `PNGEncoder` writes, `PNGValidator` accepts.
@Suite("PNGEncoder output passes PNGValidator", .timeLimit(.minutes(1)))
struct EncoderRoundTripTests {
    @Test("PNGEncoder output validates at both levels with the right header")
    func encoderRoundTrip() throws {
        let pixels = (0..<(30 * 20 * 4)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let bytes = try PNGEncoder.encodeRGBA(width: 30, height: 20, pixels: pixels)
        for level in PNGVerification.allCases {
            let info = try PNGValidator.validate(bytes, level: level)
            #expect(info == PNGInfo(width: 30, height: 20, bitDepth: 8, colorType: 6, interlaced: false))
        }
    }
}
