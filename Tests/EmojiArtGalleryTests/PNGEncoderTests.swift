import EmojiArtPNG
import Testing

@Suite("PNGEncoder: libpng's simplified write API, checked by libpng's reader")
struct PNGEncoderTests {
    @Test(
        "pixels survive an encode and a libpng decode exactly",
        arguments: [(1, 1), (3, 2), (17, 5), (360, 650)], [PNGEncoder.Compression.standard, .stored])
    func roundTrip(size: (width: Int, height: Int), compression: PNGEncoder.Compression) throws {
        let (width, height) = size
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for index in pixels.indices {
            pixels[index] = UInt8(truncatingIfNeeded: index &* 2_654_435_761 >> 7)
        }
        let png = try PNGEncoder.encodeRGBA(width: width, height: height, pixels: pixels, compression: compression)
        #expect(png.starts(with: PNGInspection.signature))
        let dimensions = try PNGInspection.dimensions(png)
        #expect(dimensions.width == width && dimensions.height == height)
        #expect(try PNGInspection.chunks(png).allSatisfy { $0.crcMatches })
        let decoded = try PNGInspection.decodeRGBA(png)
        #expect(decoded.pixels == pixels)
    }

    /// 2.1 MB of pixels: stored, they take their own size and a few bytes more, in three `IDAT` chunks of at most
    /// 1 MiB; libpng decodes them (the round trip above checks the pixels).
    @Test("stored: the file is the pixels' size and a little more, in IDAT chunks of at most 1 MiB")
    func storedSize() throws {
        let (width, height) = (1024, 520)
        let pixels = (0..<(width * height * 4)).map { UInt8(truncatingIfNeeded: $0 &* 31 >> 3) }
        let png = try PNGEncoder.encodeRGBA(width: width, height: height, pixels: pixels, compression: .stored)
        let overhead = png.count - pixels.count
        // A filter byte per row, 5 bytes per stored block of at most 64 KiB, zlib's 6, 12 per chunk, the signature.
        #expect(overhead >= height && overhead < height + 1024, "\(png.count) bytes for \(pixels.count) of pixels")
        let idat = try PNGInspection.chunks(png).filter { $0.type == "IDAT" }
        #expect(idat.count == 3)
        #expect(try PNGInspection.chunks(png).allSatisfy { $0.crcMatches })
        #expect(try PNGInspection.decodeRGBA(png).pixels == pixels)
    }

    @Test("encoding is deterministic")
    func deterministic() throws {
        let pixels = (0..<(40 * 30 * 4)).map { UInt8(truncatingIfNeeded: $0 * 7) }
        #expect(try PNGEncoder.encodeRGBA(width: 40, height: 30, pixels: pixels) == PNGEncoder.encodeRGBA(width: 40, height: 30, pixels: pixels))
    }

    @Test("bad dimensions are refused before libpng is called", arguments: [(0, 10), (10, 0), (-1, 5), (1 << 30, 1)])
    func badDimensions(width: Int, height: Int) {
        #expect {
            try PNGEncoder.encodeRGBA(width: width, height: height, pixels: [])
        } throws: { error in
            (error as? PNGEncodingError)?.kind == .invalidDimensions
        }
    }

    @Test("a buffer of the wrong size is refused, with the sizes in the message")
    func wrongBufferSize() {
        do {
            _ = try PNGEncoder.encodeRGBA(width: 4, height: 4, pixels: [UInt8](repeating: 0, count: 63))
            Issue.record("expected an error")
        } catch {
            #expect(error.kind == .bufferSizeMismatch)
            #expect(error.message.contains("64"))
            #expect(error.message.contains("63"))
            #expect(error.call == nil)
            #expect(error.description.contains("bufferSizeMismatch"))
        }
    }
}
