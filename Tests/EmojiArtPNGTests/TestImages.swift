import CPNG

/// Real PNGs for the tests, made two ways:
/// - `encoded(...)`: libpng's simplified write API (`png_image_write_to_memory`), i.e. what a real encoder
///   produces, for RGBA, grey and palette images;
/// - `handBuilt(...)`: chunk by chunk with zlib (`compress2`, `crc32`), for what libpng's simplified API
///   cannot write (Adam7 interlacing) or refuses to write on purpose (absurd or invalid headers).
/// `decodesWithSimplifiedAPI` reads an image back with libpng's simplified read API, so the tests can
/// prove a hand-built image is valid independently of the validator under test.
enum TestImages {
    /// libpng or zlib refused to make a test image: the test that asked fails, never the whole run.
    struct EncodingFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Pixel layouts the libpng-encoded images come in.
    enum Format: String, CaseIterable, CustomStringConvertible {
        case rgba, gray, palette
        var description: String { rawValue }
    }

    /// A `width`x`height` image in `format`, encoded by libpng. The pixels are a gradient plus seeded
    /// noise, so the IDAT data is realistic (it compresses, but not to nothing).
    static func encoded(width: Int, height: Int, format: Format, seed: UInt64 = 1) throws(EncodingFailure) -> [UInt8] {
        var random = SplitMix(seed: seed)
        var image = png_image()
        image.version = png_uint_32(PNG_IMAGE_VERSION)
        image.width = png_uint_32(width)
        image.height = png_uint_32(height)
        var pixels: [UInt8]
        var colormap: [UInt8] = []
        switch format {
        case .rgba:
            image.format = rgbaFormat
            pixels = []
            pixels.reserveCapacity(width * height * 4)
            for y in 0..<height {
                for x in 0..<width {
                    let noise = UInt8(truncatingIfNeeded: random.next() & 0x1F)
                    pixels += [
                        UInt8(truncatingIfNeeded: x * 255 / max(width, 1)) &+ noise,
                        UInt8(truncatingIfNeeded: y * 255 / max(height, 1)) &+ noise,
                        0x80 &+ noise, 0xFF,
                    ]
                }
            }
        case .gray:
            image.format = png_uint_32(PNG_FORMAT_GRAY)
            pixels = (0..<(width * height)).map { index in
                UInt8(truncatingIfNeeded: index % width * 2) &+ UInt8(truncatingIfNeeded: random.next() & 0x0F)
            }
        case .palette:
            image.format = PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_COLORMAP
            image.colormap_entries = 16
            for entry: UInt8 in 0..<16 {
                colormap += [entry &* 16, 255 &- entry &* 16, entry &* 8]
            }
            pixels = (0..<(width * height)).map { _ in UInt8(truncatingIfNeeded: random.next() % 16) }
        }
        let stride = png_int_32(format == .rgba ? width * 4 : width)
        var size: png_alloc_size_t = 0
        let measured = pixels.withUnsafeBytes { source in
            colormap.withUnsafeBytes { map in
                png_image_write_to_memory(&image, nil, &size, 0, source.baseAddress, stride, map.baseAddress)
            }
        }
        guard measured != 0 else { throw EncodingFailure("png_image_write_to_memory failed to measure: \(message(of: image))") }
        var output = [UInt8](repeating: 0, count: Int(size))
        let written = output.withUnsafeMutableBytes { destination in
            pixels.withUnsafeBytes { source in
                colormap.withUnsafeBytes { map in
                    png_image_write_to_memory(
                        &image, destination.baseAddress, &size, 0, source.baseAddress, stride, map.baseAddress)
                }
            }
        }
        guard written != 0 else { throw EncodingFailure("png_image_write_to_memory failed: \(message(of: image))") }
        return Array(output.prefix(Int(size)))
    }

    /// Reads `bytes` completely with libpng's simplified API into RGBA. True when libpng accepts the image:
    /// an independent witness that a hand-built test image is a valid PNG.
    static func decodesWithSimplifiedAPI(_ bytes: [UInt8]) -> Bool {
        var image = png_image()
        image.version = png_uint_32(PNG_IMAGE_VERSION)
        let begun = bytes.withUnsafeBytes { png_image_begin_read_from_memory(&image, $0.baseAddress, $0.count) }
        guard begun != 0 else { return false }
        image.format = rgbaFormat
        var buffer = [UInt8](repeating: 0, count: Int(image.width) * Int(image.height) * 4)
        let finished = buffer.withUnsafeMutableBytes { png_image_finish_read(&image, nil, $0.baseAddress, 0, nil) }
        png_image_free(&image)
        return finished != 0
    }

    /// `PNG_FORMAT_RGBA`: Swift does not import that macro (it is an expression of other macros).
    static let rgbaFormat = PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA

    // MARK: - Hand-built PNGs

    /// The parameters of a hand-built IHDR. Defaults: 8-bit RGB, not interlaced.
    struct Header {
        var width: UInt32
        var height: UInt32
        var bitDepth: UInt8 = 8
        var colorType: UInt8 = 2
        var interlaced = false

        var chunk: [UInt8] {
            TestImages.chunk("IHDR", bigEndian(width) + bigEndian(height) + [bitDepth, colorType, 0, 0, interlaced ? 1 : 0])
        }
    }

    /// Signature, IHDR, one IDAT holding `imageData` compressed with zlib, IEND.
    static func handBuilt(_ header: Header, imageData: [UInt8]) throws(EncodingFailure) -> [UInt8] {
        try signature + header.chunk + chunk("IDAT", compressed(imageData)) + chunk("IEND", [])
    }

    /// A valid 8-bit RGB image, Adam7-interlaced when asked.
    static func handBuiltRGB(width: Int, height: Int, interlaced: Bool, seed: UInt64 = 7) throws(EncodingFailure) -> [UInt8] {
        try handBuiltImage(Header(width: UInt32(width), height: UInt32(height), interlaced: interlaced), seed: seed)
    }

    /// A valid image of any bit depth and colour type the header names (a palette image gets a PLTE with
    /// one entry per possible index), with random samples: every pass's rows, each with filter byte 0.
    static func handBuiltImage(_ header: Header, seed: UInt64 = 7) throws(EncodingFailure) -> [UInt8] {
        var random = SplitMix(seed: seed)
        guard let channels = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][Int(header.colorType)] else {
            throw EncodingFailure("colour type \(header.colorType) does not exist")
        }
        let bitsPerPixel = channels * Int(header.bitDepth)
        let (width, height) = (Int(header.width), Int(header.height))
        // (x start, y start, x step, y step) per Adam7 pass; one pass covering everything when not interlaced.
        let passes: [(Int, Int, Int, Int)] =
            header.interlaced
            ? [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
            : [(0, 0, 1, 1)]
        var raw: [UInt8] = []
        for (x0, y0, dx, dy) in passes {
            let columns = width > x0 ? (width - x0 + dx - 1) / dx : 0
            let rows = height > y0 ? (height - y0 + dy - 1) / dy : 0
            guard columns > 0 && rows > 0 else { continue }  // an empty pass has no rows at all
            let rowBytes = (columns * bitsPerPixel + 7) / 8
            for _ in 0..<rows {
                raw.append(0)
                for _ in 0..<rowBytes { raw.append(UInt8(truncatingIfNeeded: random.next())) }
            }
        }
        // Random palette indices may exceed a short palette; give the palette every possible index.
        let palette =
            header.colorType == 3
            ? chunk("PLTE", (0..<(1 << Int(header.bitDepth))).flatMap { _ in [UInt8](repeating: 0x7F, count: 3) }) : []
        return try signature + header.chunk + palette + chunk("IDAT", compressed(raw)) + chunk("IEND", [])
    }

    /// One chunk: length, type, data, CRC-32 of type + data.
    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeAndData = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typeAndData + bigEndian(crc(typeAndData))
    }

    static func crc(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
    }

    static func crc(_ bytes: [UInt8]) -> UInt32 { crc(bytes[...]) }

    static func compressed(_ data: [UInt8]) throws(EncodingFailure) -> [UInt8] {
        var size = compressBound(uLong(data.count))
        var output = [UInt8](repeating: 0, count: Int(size))
        let status = output.withUnsafeMutableBufferPointer { destination in
            data.withUnsafeBufferPointer { compress2(destination.baseAddress, &size, $0.baseAddress, uLong(data.count), 9) }
        }
        guard status == Z_OK else { throw EncodingFailure("compress2 failed: \(status)") }
        return Array(output.prefix(Int(size)))
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8),
         UInt8(truncatingIfNeeded: value)]
    }

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    private static func message(of image: png_image) -> String {
        withUnsafeBytes(of: image.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}

/// Where a chunk sits in a PNG's bytes, for tests that cut or damage a particular chunk.
struct ChunkLocation {
    let offset: Int
    let length: Int
    let type: String
    var dataOffset: Int { offset + 8 }
    var crcOffset: Int { offset + 8 + length }
    var end: Int { offset + 12 + length }

    /// The chunks of a well-formed PNG, in order.
    static func all(in bytes: [UInt8]) -> [ChunkLocation] {
        var chunks: [ChunkLocation] = []
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8
                | Int(bytes[offset + 3])
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            chunks.append(ChunkLocation(offset: offset, length: length, type: type))
            offset += 12 + length
        }
        return chunks
    }

    static func first(_ type: String, in bytes: [UInt8]) -> ChunkLocation? {
        all(in: bytes).first { $0.type == type }
    }
}

extension Array where Element == UInt8 {
    /// Recomputes the CRC of `chunk` after its type or data were edited, so only a decoder can notice.
    mutating func fixCRC(of chunk: ChunkLocation) {
        let value = TestImages.crc(self[(chunk.offset + 4)..<chunk.crcOffset])
        replaceSubrange(chunk.crcOffset..<(chunk.crcOffset + 4), with: TestImages.bigEndian(value))
    }
}

/// A small deterministic random generator (SplitMix64), so every test image is the same on every run.
struct SplitMix {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
