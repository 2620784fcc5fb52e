import CPNG

/// The structure check: the signature, then every chunk's framing, in one pass over the bytes.
///
/// A chunk is `length (4, big-endian) | type (4) | data (length) | CRC-32 of type+data (4)`. The walk checks
/// each length against the spec (at most 2^31-1), against `PNGLimits.maxChunkSize` and against the bytes
/// left; each type for ASCII letters; each CRC with zlib's `crc32`; and the order: IHDR first (13 bytes,
/// dimensions within limits), IDAT present and contiguous, IEND empty and last, nothing after it.
/// It reads the input in place and allocates nothing (except for an error message).
enum PNGChunkWalk {
    /// Walks `bytes` and returns the IHDR facts, or throws the first defect found.
    static func walk(_ bytes: UnsafeBufferPointer<UInt8>, limits: PNGLimits) throws(PNGDefect) -> PNGInfo {
        let signatureLength = PNGSignature.bytes.count
        guard bytes.count >= signatureLength else {
            if PNGSignature.isTruncatedPrefix(bytes) {
                throw PNGDefect(
                    .truncated,
                    "truncated inside the PNG signature: \(bytes.count) of \(signatureLength) bytes",
                    offset: 0)
            }
            throw PNGDefect(.notPNG, "not a PNG: \(bytes.count) bytes starting \(preview(bytes))", offset: 0)
        }
        guard PNGSignature.isPresent(in: bytes) else {
            throw PNGDefect(.notPNG, "not a PNG: the data starts \(preview(bytes))", offset: 0)
        }

        var info: PNGInfo?
        var offset = signatureLength
        var previous: ChunkType?
        var sawIDAT = false
        var idatRunEnded = false
        while true {
            let remaining = bytes.count - offset
            guard remaining > 0 else {
                guard let previous else {
                    throw PNGDefect(.truncated, "truncated after the signature: no chunks", offset: offset)
                }
                throw PNGDefect(
                    .missingIEND,
                    "no IEND chunk: the data ends after chunk \(previous) at offset \(offset) (cut at a chunk boundary?)",
                    offset: offset)
            }
            guard remaining >= 8 else {
                throw PNGDefect(
                    .truncated,
                    "truncated inside the chunk header at offset \(offset): \(remaining) of 8 bytes",
                    offset: offset)
            }
            let length = readUInt32(bytes, at: offset)
            let type = ChunkType(rawValue: readUInt32(bytes, at: offset + 4))
            let at = "chunk \(type) at offset \(offset)"

            if info == nil && type != .header {
                throw PNGDefect(.missingIHDR, "the first chunk is \(type), not IHDR (offset \(offset))", offset: offset)
            }
            guard length <= 0x7FFF_FFFF else {
                throw PNGDefect(
                    .badChunkLength, "\(at): length \(length) is above the PNG maximum 2^31-1", offset: offset)
            }
            guard type.isLetters else {
                throw PNGDefect(.badChunkType, "\(at): the type is not four ASCII letters", offset: offset)
            }
            guard length <= limits.maxChunkSize else {
                throw PNGDefect(
                    .chunkTooLarge,
                    "\(at): length \(length) is above the limit of \(limits.maxChunkSize) bytes",
                    offset: offset)
            }
            let chunkSize = 12 + Int(length)
            guard chunkSize <= remaining else {
                throw PNGDefect(
                    .truncated,
                    "truncated inside \(at): it needs \(chunkSize) bytes, \(remaining) are left",
                    offset: offset)
            }
            let stored = readUInt32(bytes, at: offset + 8 + Int(length))
            // crc32's length is a uInt (32 bits): fine, the length is at most 2^31-1 + 4.
            let computed = UInt32(truncatingIfNeeded: crc32(0, bytes.baseAddress! + offset + 4, uInt(length) + 4))
            guard stored == computed else {
                throw PNGDefect(
                    .badCRC,
                    "\(at): CRC mismatch (stored \(hex(stored)), computed \(hex(computed)))",
                    offset: offset)
            }

            switch type {
            case .header:
                guard info == nil else {
                    throw PNGDefect(.badChunkOrder, "\(at): a second IHDR", offset: offset)
                }
                info = try header(bytes, dataAt: offset + 8, length: length, chunkOffset: offset, limits: limits)
            case .imageData:
                guard !idatRunEnded else {
                    throw PNGDefect(
                        .badChunkOrder, "\(at): IDAT chunks are not contiguous (\(previous!) came between)",
                        offset: offset)
                }
                sawIDAT = true
            case .end:
                guard sawIDAT else {
                    throw PNGDefect(.missingIDAT, "\(at): IEND before any IDAT, there is no image data", offset: offset)
                }
                guard length == 0 else {
                    throw PNGDefect(.badChunkLength, "\(at): IEND must be empty, it has \(length) bytes", offset: offset)
                }
                let end = offset + chunkSize
                guard end == bytes.count else {
                    throw PNGDefect(
                        .dataAfterIEND,
                        "\(bytes.count - end) bytes after the IEND chunk at offset \(offset)", offset: end)
                }
                guard let info else {
                    preconditionFailure("unreachable: the first chunk was checked to be IHDR")
                }
                return info
            case .palette:
                guard !sawIDAT else {
                    throw PNGDefect(.badChunkOrder, "\(at): PLTE after the image data", offset: offset)
                }
            default:
                guard !type.isCritical else {
                    throw PNGDefect(.badChunkType, "\(at): unknown critical chunk", offset: offset)
                }
                if sawIDAT { idatRunEnded = true }
            }
            previous = type
            offset += chunkSize
        }
    }

    /// Checks IHDR's length and the dimensions against `limits`. The other fields (bit depth, colour
    /// type, methods) are left to libpng's `png_read_info`, which knows every rule.
    private static func header(
        _ bytes: UnsafeBufferPointer<UInt8>, dataAt data: Int, length: UInt32, chunkOffset: Int, limits: PNGLimits
    ) throws(PNGDefect) -> PNGInfo {
        guard length == 13 else {
            throw PNGDefect(
                .badIHDR, "chunk IHDR at offset \(chunkOffset): \(length) bytes, IHDR has 13", offset: chunkOffset)
        }
        let width = readUInt32(bytes, at: data)
        let height = readUInt32(bytes, at: data + 4)
        guard width <= limits.maxWidth && height <= limits.maxHeight else {
            throw PNGDefect(
                .tooLarge,
                "image is \(width)x\(height), above the limit of \(limits.maxWidth)x\(limits.maxHeight)",
                offset: chunkOffset)
        }
        let pixels = UInt64(width) * UInt64(height)
        guard pixels <= limits.maxPixels else {
            throw PNGDefect(
                .tooLarge,
                "image is \(width)x\(height) = \(pixels) pixels, above the limit of \(limits.maxPixels) pixels",
                offset: chunkOffset)
        }
        return PNGInfo(
            width: width, height: height, bitDepth: bytes[data + 8], colorType: bytes[data + 9],
            interlaced: bytes[data + 12] == 1)
    }

    /// A big-endian UInt32 at `offset`; the caller has checked that 4 bytes are there.
    private static func readUInt32(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16
            | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// The first bytes as a quoted string a person can read: printable ASCII as is, the rest as `\xNN`.
    /// Shows at a glance that the "image" is `{"error": "File not found."}` or an HTML page.
    static func preview(_ bytes: UnsafeBufferPointer<UInt8>, limit: Int = 24) -> String {
        var text = "\""
        for byte in bytes.prefix(limit) {
            switch byte {
            case 0x22: text += "\\\""
            case 0x5C: text += "\\\\"
            case 0x20...0x7E: text.unicodeScalars.append(Unicode.Scalar(byte))
            default: text += "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }
        }
        return text + (bytes.count > limit ? "...\"" : "\"")
    }
}

/// A chunk type: four bytes, big-endian in a UInt32. Prints as its letters, or `\xNN` escapes if not.
struct ChunkType: RawRepresentable, Equatable, CustomStringConvertible {
    let rawValue: UInt32

    static let header = ChunkType(rawValue: 0x4948_4452)  // IHDR
    static let palette = ChunkType(rawValue: 0x504C_5445)  // PLTE
    static let imageData = ChunkType(rawValue: 0x4944_4154)  // IDAT
    static let end = ChunkType(rawValue: 0x4945_4E44)  // IEND

    /// Byte `index` (0...3) of the type, in file order.
    private func byte(_ index: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: rawValue >> UInt32(24 - 8 * index))
    }

    /// All four bytes are ASCII letters (A-Z, a-z), as the spec requires.
    var isLetters: Bool {
        // Setting bit 5 maps A-Z onto a-z and nothing else onto a-z.
        (0..<4).allSatisfy { (0x61...0x7A).contains(byte($0) | 0x20) }
    }

    /// Bit 5 of the first byte clear (an upper-case first letter): a decoder must understand the chunk.
    var isCritical: Bool {
        rawValue & 0x2000_0000 == 0
    }

    var description: String {
        (0..<4).map { index in
            let value = byte(index)
            return (0x21...0x7E).contains(value)
                ? String(Unicode.Scalar(value)) : "\\x" + (value < 16 ? "0" : "") + String(value, radix: 16)
        }.joined()
    }
}
