import EmojiArtPNG
import Testing

/// Valid PNGs pass at both levels and report their header.
@Suite("PNGValidator accepts valid images", .timeLimit(.minutes(1)))
struct ValidImageTests {
    @Test("libpng-encoded images pass both levels", arguments: TestImages.Format.allCases, PNGVerification.allCases)
    func encodedImagesPass(format: TestImages.Format, level: PNGVerification) throws {
        let bytes = try TestImages.encoded(width: 120, height: 90, format: format)
        let info = try PNGValidator.validate(bytes, level: level)
        #expect(info.width == 120)
        #expect(info.height == 90)
        #expect(info.interlaced == false)
        switch format {
        case .rgba: #expect(info.colorType == 6 && info.bitDepth == 8)
        case .gray: #expect(info.colorType == 0 && info.bitDepth == 8)
        // libpng writes a 16-entry palette with 4-bit indices or 8-bit; either way it is colour type 3.
        case .palette: #expect(info.colorType == 3)
        }
    }

    @Test("a gallery-sized RGBA image passes both levels", arguments: PNGVerification.allCases)
    func gallerySized(level: PNGVerification) throws {
        let bytes = try TestImages.encoded(width: 360, height: 650, format: .rgba, seed: 3)
        #expect(bytes.count > 20_000)
        #expect(try PNGValidator.validate(bytes, level: level) == PNGInfo(
            width: 360, height: 650, bitDepth: 8, colorType: 6, interlaced: false))
    }

    @Test("an Adam7-interlaced image passes full decode", arguments: [(1, 1), (5, 3), (33, 17), (64, 64)])
    func interlacedPasses(width: Int, height: Int) throws {
        let bytes = try TestImages.handBuiltRGB(width: width, height: height, interlaced: true)
        #expect(TestImages.decodesWithSimplifiedAPI(bytes), "libpng itself must accept the hand-built image")
        let info = try PNGValidator.validate(bytes, level: .full)
        #expect(info.interlaced)
        #expect(info.width == UInt32(width) && info.height == UInt32(height))
    }

    @Test("every bit depth and colour type decodes, interlaced or not", arguments: [
        (UInt8(1), UInt8(0)), (2, 0), (4, 0), (8, 0), (16, 0), (8, 2), (16, 2), (1, 3), (2, 3), (4, 3), (8, 3),
        (8, 4), (16, 4), (8, 6), (16, 6),
    ], [false, true])
    func everyPixelFormat(format: (bitDepth: UInt8, colorType: UInt8), interlaced: Bool) throws {
        let header = TestImages.Header(
            width: 37, height: 23, bitDepth: format.bitDepth, colorType: format.colorType, interlaced: interlaced)
        let bytes = try TestImages.handBuiltImage(header)
        #expect(TestImages.decodesWithSimplifiedAPI(bytes), "libpng itself must accept the hand-built image")
        let info = try PNGValidator.validate(bytes, level: .full)
        #expect(info == PNGInfo(
            width: 37, height: 23, bitDepth: format.bitDepth, colorType: format.colorType, interlaced: interlaced))
    }

    @Test("a hand-built non-interlaced image passes full decode")
    func handBuiltPasses() throws {
        let bytes = try TestImages.handBuiltRGB(width: 40, height: 30, interlaced: false)
        #expect(TestImages.decodesWithSimplifiedAPI(bytes))
        #expect(try PNGValidator.validate(bytes, level: .full).colorType == 2)
    }

    @Test("ancillary chunks before and after the image data are accepted")
    func ancillaryChunks() throws {
        var bytes = try TestImages.handBuiltRGB(width: 8, height: 8, interlaced: false)
        let idat = try #require(ChunkLocation.first("IDAT", in: bytes))
        let text = TestImages.chunk("tEXt", Array("Comment\u{0}emoji art".utf8))
        bytes.insert(contentsOf: text, at: idat.end)  // after IDAT, before IEND
        bytes.insert(contentsOf: TestImages.chunk("tIME", [0x07, 0xE9, 1, 2, 3, 4, 5]), at: idat.offset)
        for level in PNGVerification.allCases {
            #expect(try PNGValidator.validate(bytes, level: level).width == 8)
        }
    }

    @Test("image data split over several contiguous IDAT chunks is accepted")
    func splitIDAT() throws {
        let bytes = try TestImages.handBuiltRGB(width: 50, height: 50, interlaced: false)
        let idat = try #require(ChunkLocation.first("IDAT", in: bytes))
        let data = Array(bytes[idat.dataOffset..<idat.crcOffset])
        let split = data.count / 3
        let rebuilt = Array(bytes[..<idat.offset]) + TestImages.chunk("IDAT", Array(data[..<split]))
            + TestImages.chunk("IDAT", []) + TestImages.chunk("IDAT", Array(data[split...]))
            + Array(bytes[idat.end...])
        #expect(try PNGValidator.validate(rebuilt, level: .full).height == 50)
    }

    @Test("custom limits admit an image exactly at the limit")
    func exactlyAtLimits() throws {
        let bytes = try TestImages.encoded(width: 64, height: 32, format: .gray)
        let limits = PNGLimits(maxWidth: 64, maxHeight: 32, maxPixels: 64 * 32)
        #expect(try PNGValidator.validate(bytes, level: .full, limits: limits).width == 64)
    }

    @Test("hasSignature sniffs the first 8 bytes of any byte collection")
    func signatureSniffing() throws {
        let png = try TestImages.encoded(width: 4, height: 4, format: .gray)
        #expect(PNGValidator.hasSignature(png))
        #expect(PNGValidator.hasSignature(png[...]))
        #expect(PNGValidator.hasSignature(PNGSignature.bytes))
        #expect(!PNGValidator.hasSignature(Array(png.prefix(7))))
        #expect(!PNGValidator.hasSignature(Array(#"{"error": "File not found."}"#.utf8)))
        #expect(!PNGValidator.hasSignature([UInt8]()))
    }

    @Test("validation from many tasks at once gives every task the right verdict")
    func concurrentValidation() async throws {
        let good = try TestImages.encoded(width: 200, height: 150, format: .rgba, seed: 11)
        var damaged = good
        let idat = try #require(ChunkLocation.first("IDAT", in: damaged))
        damaged[idat.dataOffset + idat.length / 2] ^= 0xFF
        damaged.fixCRC(of: idat)
        let verdicts = await withTaskGroup(of: (Bool, PNGDefect.Kind?).self) { group in
            for index in 0..<64 {
                let isGood = index.isMultiple(of: 2)
                let bytes = isGood ? good : damaged
                group.addTask {
                    do throws(PNGDefect) {
                        _ = try PNGValidator.validate(bytes, level: .full)
                        return (isGood, nil)
                    } catch {
                        return (isGood, error.kind)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(verdicts.count == 64)
        for (isGood, kind) in verdicts {
            #expect(kind == (isGood ? nil : .decodeFailed))
        }
    }
}
