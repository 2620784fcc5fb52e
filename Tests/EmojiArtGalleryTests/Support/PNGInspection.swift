import CPNG
import TestSupport

/// One chunk of a PNG file, with its stored CRC and the CRC of what is actually there.
struct PNGChunk: Sendable {
    var type: String
    var data: [UInt8]
    var storedCRC: UInt32
    var computedCRC: UInt32
    var crcMatches: Bool { storedCRC == computedCRC }
}

/// Reads PNG files the way a strict client would: the signature, the chunk framing and CRCs
/// (zlib's `crc32`), and a full decode with libpng's simplified read API. Test-side only, and
/// independent of the code under test.
enum PNGInspection {
    /// The 8-byte PNG signature.
    static let signature: [UInt8] = [137, 80, 78, 71, 13, 10, 26, 10]

    /// The chunks in order; throws if the signature or the framing (lengths) is wrong.
    static func chunks(_ bytes: [UInt8]) throws -> [PNGChunk] {
        guard bytes.starts(with: signature) else { throw TestFailure("no PNG signature") }
        var chunks: [PNGChunk] = []
        var offset = 8
        while offset < bytes.count {
            guard offset + 12 <= bytes.count else { throw TestFailure("chunk header cut at \(offset)") }
            let length = Int(bigEndian32(bytes, at: offset))
            guard offset + 12 + length <= bytes.count else { throw TestFailure("chunk at \(offset) overruns the file") }
            let typeAndData = Array(bytes[(offset + 4)..<(offset + 8 + length)])
            let computed = typeAndData.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
            chunks.append(PNGChunk(
                type: String(decoding: typeAndData.prefix(4), as: UTF8.self),
                data: Array(typeAndData.dropFirst(4)),
                storedCRC: bigEndian32(bytes, at: offset + 8 + length),
                computedCRC: computed
            ))
            offset += 12 + length
        }
        return chunks
    }

    /// Width and height from the IHDR chunk.
    static func dimensions(_ bytes: [UInt8]) throws -> (width: Int, height: Int) {
        guard let header = try chunks(bytes).first, header.type == "IHDR", header.data.count == 13 else {
            throw TestFailure("first chunk is not a 13-byte IHDR")
        }
        return (Int(bigEndian32(header.data, at: 0)), Int(bigEndian32(header.data, at: 4)))
    }

    /// Decodes the whole image to 8-bit RGBA with libpng (`png_image_begin_read_from_memory`,
    /// `png_image_finish_read`). Throws with libpng's message when it refuses the file.
    static func decodeRGBA(_ bytes: [UInt8]) throws -> (width: Int, height: Int, pixels: [UInt8]) {
        var image = png_image()
        image.version = png_uint_32(PNG_IMAGE_VERSION)
        let begun = bytes.withUnsafeBytes { png_image_begin_read_from_memory(&image, $0.baseAddress, $0.count) }
        guard begun != 0 else { throw TestFailure("libpng: \(message(of: image))") }
        image.format = png_uint_32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA)
        let width = Int(image.width)
        let height = Int(image.height)
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        let finished = pixels.withUnsafeMutableBytes { png_image_finish_read(&image, nil, $0.baseAddress, 0, nil) }
        guard finished != 0 else {
            let text = message(of: image)
            png_image_free(&image)
            throw TestFailure("libpng: \(text)")
        }
        return (width, height, pixels)
    }

    private static func message(of image: png_image) -> String {
        withUnsafeBytes(of: image.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    private static func bigEndian32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }
}
