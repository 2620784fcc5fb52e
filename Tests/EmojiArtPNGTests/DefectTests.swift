import EmojiArtPNG
import Testing

/// Runs `validate` and returns the defect it throws, or nil when it accepts the bytes.
func defect(
    _ bytes: [UInt8], level: PNGVerification = .structure, limits: PNGLimits = .default
) -> PNGDefect? {
    do throws(PNGDefect) {
        _ = try PNGValidator.validate(bytes, level: level, limits: limits)
        return nil
    } catch {
        return error
    }
}

/// Damage the chunk walk must find at both levels, each reported with the right kind and a message that
/// says where.
@Suite("PNGValidator refuses damaged framing", .timeLimit(.minutes(1)))
struct DefectTests {
    let image: [UInt8]

    init() throws {
        image = try TestImages.encoded(width: 48, height: 40, format: .rgba, seed: 5)
    }

    @Test("the gallery's JSON error body is notPNG", arguments: PNGVerification.allCases)
    func jsonIsNotPNG(level: PNGVerification) throws {
        let found = try #require(defect(Array(#"{"error": "File not found."}"#.utf8), level: level))
        #expect(found.kind == .notPNG)
        #expect(found.message.contains(#"{\"error\""#), "the message shows what the data starts with")
        #expect(found.offset == 0)
    }

    @Test("short data that does not start like a PNG is notPNG, not truncated")
    func shortGarbage() {
        #expect(defect(Array("GIF".utf8))?.kind == .notPNG)
        #expect(defect([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x0A])?.kind == .notPNG)  // LF-mangled
    }

    @Test("a PNG mangled by CRLF conversion is notPNG")
    func crlfMangled() {
        var bytes = image
        bytes.insert(0x0D, at: 7)  // "\n" at 7 became "\r\n"
        #expect(defect(bytes)?.kind == .notPNG)
    }

    @Test("truncation is reported as truncated at both levels", arguments: PNGVerification.allCases)
    func truncatedAtSeveralPlaces(level: PNGVerification) throws {
        let idat = try #require(ChunkLocation.first("IDAT", in: image))
        let iend = try #require(ChunkLocation.first("IEND", in: image))
        let cuts: [(String, Int)] = [
            ("empty", 0),
            ("inside the signature", 5),
            ("inside the IHDR chunk header", 8 + 3),
            ("inside the IHDR data", 8 + 8 + 6),
            ("inside the IDAT chunk header", idat.offset + 5),
            ("inside the IDAT data", idat.dataOffset + idat.length / 2),
            ("inside the IDAT CRC", idat.crcOffset + 2),
            ("inside the IEND chunk", iend.offset + 6),
            ("inside the IEND CRC", image.count - 1),
        ]
        for (place, count) in cuts {
            let found = try #require(defect(Array(image.prefix(count)), level: level), "cut \(place)")
            #expect(found.kind == .truncated, "cut \(place) at \(count): \(found)")
            #expect(found.message.contains("truncated"), "cut \(place): \(found)")
        }
        // The message names the chunk and offset that were cut.
        let cutInIDAT = try #require(defect(Array(image.prefix(idat.dataOffset + 10)), level: level))
        #expect(cutInIDAT.message.contains("IDAT at offset \(idat.offset)"), "\(cutInIDAT)")
        #expect(cutInIDAT.offset == idat.offset)
    }

    @Test("data ending at a chunk boundary without IEND is missingIEND")
    func missingIEND() throws {
        let iend = try #require(ChunkLocation.first("IEND", in: image))
        let found = try #require(defect(Array(image.prefix(iend.offset))))
        #expect(found.kind == .missingIEND)
        #expect(found.message.contains("after chunk IDAT"), "\(found)")
        #expect(found.offset == iend.offset)
    }

    @Test("bytes after IEND are dataAfterIEND", arguments: [[0x00], Array("trailing".utf8), TestImages.chunk("tEXt", [])])
    func dataAfterIEND(trailer: [UInt8]) throws {
        let found = try #require(defect(image + trailer))
        #expect(found.kind == .dataAfterIEND)
        #expect(found.offset == image.count)
        #expect(found.message.hasPrefix("\(trailer.count) bytes after the IEND chunk"), "\(found)")
    }

    @Test("one flipped bit inside IDAT, CRC unchanged, is badCRC at both levels", arguments: PNGVerification.allCases)
    func flippedBitInIDAT(level: PNGVerification) throws {
        var bytes = image
        let idat = try #require(ChunkLocation.first("IDAT", in: bytes))
        bytes[idat.dataOffset + idat.length / 2] ^= 0x10
        let found = try #require(defect(bytes, level: level))
        #expect(found.kind == .badCRC)
        #expect(found.message.hasPrefix("chunk IDAT at offset \(idat.offset): CRC mismatch"), "\(found)")
        #expect(found.libpngFunction == nil, "the chunk walk finds it before libpng runs")
    }

    @Test("a damaged CRC on an ancillary chunk is badCRC too")
    func ancillaryCRC() throws {
        var bytes = image
        let idat = try #require(ChunkLocation.first("IDAT", in: bytes))
        var text = TestImages.chunk("tEXt", Array("Title\u{0}x".utf8))
        text[text.count - 1] ^= 1
        bytes.insert(contentsOf: text, at: idat.offset)
        #expect(defect(bytes)?.kind == .badCRC)
    }

    @Test("a chunk length of 0x7FFFFFF0 is chunkTooLarge, above 2^31-1 badChunkLength")
    func hugeChunkLengths() throws {
        let idat = try #require(ChunkLocation.first("IDAT", in: image))
        var bytes = image
        bytes.replaceSubrange(idat.offset..<(idat.offset + 4), with: TestImages.bigEndian(0x7FFF_FFF0))
        let tooLarge = try #require(defect(bytes, level: .full))
        #expect(tooLarge.kind == .chunkTooLarge)
        #expect(tooLarge.message.contains("2147483632"), "\(tooLarge)")
        // With the limit lifted, the same length is simply more than the data holds.
        let lifted = PNGLimits(maxChunkSize: .max)
        #expect(defect(bytes, limits: lifted)?.kind == .truncated)

        bytes.replaceSubrange(idat.offset..<(idat.offset + 4), with: TestImages.bigEndian(0x8000_0000))
        #expect(defect(bytes, limits: lifted)?.kind == .badChunkLength)
    }

    @Test("a chunk larger than a custom maxChunkSize is chunkTooLarge")
    func customChunkLimit() throws {
        let idat = try #require(ChunkLocation.first("IDAT", in: image))
        let limits = PNGLimits(maxChunkSize: UInt32(idat.length - 1))
        #expect(defect(image, limits: limits)?.kind == .chunkTooLarge)
        #expect(defect(image, limits: PNGLimits(maxChunkSize: UInt32(idat.length))) == nil)
    }

    @Test("a chunk type that is not letters is badChunkType")
    func nonLetterType() throws {
        var bytes = image
        let idat = try #require(ChunkLocation.first("IDAT", in: bytes))
        bytes.insert(contentsOf: TestImages.chunk("te1t", [1, 2, 3]), at: idat.offset)
        let found = try #require(defect(bytes))
        #expect(found.kind == .badChunkType)
        #expect(found.message.contains("te1t"))
    }

    @Test("an unknown critical chunk is badChunkType")
    func unknownCritical() throws {
        var bytes = image
        let idat = try #require(ChunkLocation.first("IDAT", in: bytes))
        bytes.insert(contentsOf: TestImages.chunk("EMOJ", [1]), at: idat.end)
        #expect(defect(bytes)?.kind == .badChunkType)
        // The same chunk marked ancillary (lower-case first letter) may be skipped.
        var ancillary = image
        ancillary.insert(contentsOf: TestImages.chunk("eMOJ", [1]), at: idat.end)
        #expect(defect(ancillary, level: .full) == nil)
    }

    @Test("a first chunk other than IHDR is missingIHDR")
    func missingIHDR() {
        var bytes = image
        bytes.insert(contentsOf: TestImages.chunk("tEXt", Array("a\u{0}b".utf8)), at: 8)
        let found = defect(bytes)
        #expect(found?.kind == .missingIHDR)
        #expect(found?.offset == 8)
    }

    @Test("an IHDR that is not 13 bytes is badIHDR")
    func shortIHDR() {
        let header = TestImages.chunk("IHDR", TestImages.bigEndian(4) + TestImages.bigEndian(4) + [8, 2, 0, 0])
        let bytes = TestImages.signature + header + Array(image[33...])
        #expect(defect(bytes)?.kind == .badIHDR)
    }

    @Test("IEND without IDAT is missingIDAT")
    func missingIDAT() {
        let bytes = TestImages.signature + TestImages.Header(width: 4, height: 4).chunk + TestImages.chunk("IEND", [])
        #expect(defect(bytes)?.kind == .missingIDAT)
    }

    @Test("an IEND with data is badChunkLength")
    func nonEmptyIEND() throws {
        let iend = try #require(ChunkLocation.first("IEND", in: image))
        let bytes = Array(image[..<iend.offset]) + TestImages.chunk("IEND", [0])
        #expect(defect(bytes)?.kind == .badChunkLength)
    }

    @Test("chunk order violations are badChunkOrder")
    func chunkOrder() throws {
        let small = try TestImages.handBuiltRGB(width: 30, height: 30, interlaced: false)
        let idat = try #require(ChunkLocation.first("IDAT", in: small))
        let data = Array(small[idat.dataOffset..<idat.crcOffset])
        let half = data.count / 2
        // IDAT, tEXt, IDAT: the image data is interrupted.
        let gap = Array(small[..<idat.offset]) + TestImages.chunk("IDAT", Array(data[..<half]))
            + TestImages.chunk("tEXt", Array("a\u{0}b".utf8)) + TestImages.chunk("IDAT", Array(data[half...]))
            + Array(small[idat.end...])
        #expect(defect(gap)?.kind == .badChunkOrder)
        // A second IHDR.
        var twice = small
        twice.insert(contentsOf: small[8..<33], at: 33)
        #expect(defect(twice)?.kind == .badChunkOrder)
        // PLTE after IDAT.
        var latePalette = small
        latePalette.insert(contentsOf: TestImages.chunk("PLTE", [0, 0, 0]), at: idat.end)
        #expect(defect(latePalette)?.kind == .badChunkOrder)
    }
}
