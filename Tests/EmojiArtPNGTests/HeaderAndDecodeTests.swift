import EmojiArtPNG
import Testing

/// What needs libpng: its IHDR rules, chunk rules before the image data, and (in `.full`) the image data.
/// Also the size limits, which must refuse a header before libpng or any pixel buffer is involved.
@Suite("PNGValidator header limits, libpng checks and full decode", .timeLimit(.minutes(1)))
struct HeaderAndDecodeTests {
    /// A valid signature, an IHDR declaring 100000x100000 with a correct CRC, a tiny IDAT, IEND.
    let absurd: [UInt8]

    init() throws {
        absurd = try TestImages.handBuilt(.init(width: 100_000, height: 100_000), imageData: [0, 1, 2, 3])
    }

    @Test("100000x100000 is tooLarge by maxPixels at both levels", arguments: PNGVerification.allCases)
    func absurdPixels(level: PNGVerification) throws {
        let roomySides = PNGLimits(maxWidth: 1_000_000, maxHeight: 1_000_000)
        let found = try #require(defect(absurd, level: level, limits: roomySides))
        #expect(found.kind == .tooLarge)
        #expect(found.message == "image is 100000x100000 = 10000000000 pixels, above the limit of 67108864 pixels")
        #expect(found.offset == 8)
        #expect(found.libpngFunction == nil, "refused from the IHDR bytes, before libpng reads anything")
    }

    @Test("100000x100000 is tooLarge by the side limits with the defaults", arguments: PNGVerification.allCases)
    func absurdSides(level: PNGVerification) throws {
        let found = try #require(defect(absurd, level: level))
        #expect(found.kind == .tooLarge)
        #expect(found.message.contains("100000x100000, above the limit of 16384x16384"), "\(found)")
        #expect(found.libpngFunction == nil)
    }

    @Test("custom limits refuse a real image one pixel too big", arguments: [
        PNGLimits(maxWidth: 63), PNGLimits(maxHeight: 31), PNGLimits(maxPixels: 64 * 32 - 1),
    ])
    func customLimits(limits: PNGLimits) throws {
        let bytes = try TestImages.encoded(width: 64, height: 32, format: .gray)
        #expect(defect(bytes, limits: limits)?.kind == .tooLarge)
    }

    @Test("libpng's IHDR rules make badIHDR", arguments: [
        (TestImages.Header(width: 4, height: 4, bitDepth: 3, colorType: 0), "bit depth"),
        (TestImages.Header(width: 4, height: 4, bitDepth: 4, colorType: 2), "bit depth"),  // RGB needs 8 or 16
        (TestImages.Header(width: 4, height: 4, bitDepth: 8, colorType: 5), "color type"),
        (TestImages.Header(width: 0, height: 4), "width is zero"),
        (TestImages.Header(width: 4, height: 0), "height is zero"),
    ])
    func libpngHeaderRules(header: TestImages.Header, reason: String) throws {
        let bytes = try TestImages.handBuilt(header, imageData: [0, 0, 0, 0, 0])
        for level in PNGVerification.allCases {
            let found = try #require(defect(bytes, level: level))
            #expect(found.kind == .badIHDR, "\(found)")
            #expect(found.libpngFunction == "png_read_info")
            #expect(found.message.lowercased().contains(reason), "libpng's reason is kept: \(found)")
        }
    }

    @Test("an unknown interlace method is badIHDR")
    func badInterlaceMethod() throws {
        var bytes = try TestImages.handBuiltRGB(width: 4, height: 4, interlaced: false)
        bytes[8 + 8 + 12] = 2
        bytes.fixCRC(of: ChunkLocation(offset: 8, length: 13, type: "IHDR"))
        #expect(defect(bytes)?.kind == .badIHDR)
    }

    @Test("a palette image without PLTE is badChunkData from libpng")
    func paletteWithoutPLTE() throws {
        let header = TestImages.Header(width: 4, height: 4, bitDepth: 8, colorType: 3)
        let bytes = try TestImages.handBuilt(header, imageData: [UInt8](repeating: 0, count: 4 * 5))
        let found = try #require(defect(bytes))
        #expect(found.kind == .badChunkData, "\(found)")
        #expect(found.libpngFunction == "png_read_info")
    }

    @Test("a byte changed in IDAT with its CRC fixed passes structure but fails full", arguments: [
        TestImages.Format.rgba, .gray, .palette,
    ])
    func hiddenDamage(format: TestImages.Format) throws {
        var bytes = try TestImages.encoded(width: 90, height: 70, format: format, seed: 9)
        let idat = try #require(ChunkLocation.first("IDAT", in: bytes))
        bytes[idat.dataOffset + idat.length / 2] ^= 0x5A
        bytes.fixCRC(of: idat)
        #expect(defect(bytes, level: .structure) == nil, "the framing and every CRC are right")
        let found = try #require(defect(bytes, level: .full))
        #expect(found.kind == .decodeFailed, "\(found)")
        #expect(found.libpngFunction == "png_read_row" || found.libpngFunction == "png_read_end")
    }

    @Test("a changed Adler-32 at the end of the zlib stream fails full decode")
    func adlerMismatch() throws {
        var bytes = try TestImages.encoded(width: 40, height: 40, format: .rgba)
        let idats = ChunkLocation.all(in: bytes).filter { $0.type == "IDAT" }
        let last = try #require(idats.last)
        bytes[last.crcOffset - 1] ^= 0x01  // the last byte of the zlib stream is the Adler-32's
        bytes.fixCRC(of: last)
        #expect(defect(bytes, level: .structure) == nil)
        #expect(defect(bytes, level: .full)?.kind == .decodeFailed)
    }

    @Test("damage inside an interlaced image fails full decode and names the passes")
    func interlacedDamage() throws {
        var bytes = try TestImages.handBuiltRGB(width: 64, height: 64, interlaced: true)
        let idat = try #require(ChunkLocation.first("IDAT", in: bytes))
        bytes[idat.dataOffset + idat.length / 3] ^= 0xFF
        bytes.fixCRC(of: idat)
        let found = try #require(defect(bytes, level: .full))
        #expect(found.kind == .decodeFailed)
        if found.libpngFunction == "png_read_row" {
            #expect(found.message.contains("7 interlace passes"), "\(found)")
        }
    }

    @Test("too little image data fails full decode")
    func tooLittleData() throws {
        // 8x8 RGB needs 8 rows of 1 + 24 bytes; give it 5 rows.
        let bytes = try TestImages.handBuilt(.init(width: 8, height: 8), imageData: [UInt8](repeating: 0, count: 5 * 25))
        #expect(defect(bytes, level: .structure) == nil)
        let found = try #require(defect(bytes, level: .full))
        #expect(found.kind == .decodeFailed)
        #expect(found.message.contains("after 5 of 8 rows"), "\(found)")
    }

    @Test("too much image data fails full decode")
    func tooMuchData() throws {
        let bytes = try TestImages.handBuilt(.init(width: 8, height: 8), imageData: [UInt8](repeating: 0, count: 9 * 25))
        #expect(defect(bytes, level: .structure) == nil)
        #expect(defect(bytes, level: .full)?.kind == .decodeFailed)
    }

    @Test("a bad filter type byte fails full decode")
    func badFilterByte() throws {
        var raw = [UInt8](repeating: 0, count: 8 * 25)
        raw[3 * 25] = 9  // filter types are 0...4
        let bytes = try TestImages.handBuilt(.init(width: 8, height: 8), imageData: raw)
        #expect(defect(bytes, level: .structure) == nil)
        #expect(defect(bytes, level: .full)?.kind == .decodeFailed)
    }
}
