import CPNG

/// Writes an 8-bit RGBA PNG whose pixel data is not compressed (``PNGEncoder/Compression/stored``): the
/// signature, `IHDR`, the rows (each with filter type 0, None) as one zlib stream of stored deflate blocks cut
/// into `IDAT` chunks, and `IEND`. zlib makes the stream (`compress2` at `Z_NO_COMPRESSION`, which computes its
/// Adler-32) and the chunks' CRC-32, so the cost is a few copies of the pixels, whatever their size.
enum StoredPNGWriter {
    /// The most data one `IDAT` chunk carries here (any size up to 2^31 - 1 is valid; 1 MiB keeps each CRC call
    /// within zlib's 32-bit length).
    static let idatChunkSize = 1 << 20

    /// The PNG file of `pixels` (`width * height * 4` bytes, already checked by ``PNGEncoder``).
    static func encodeRGBA(width: Int, height: Int, pixels: [UInt8]) throws(PNGEncodingError) -> [UInt8] {
        let rowBytes = width * 4
        var scanlines = [UInt8]()
        scanlines.reserveCapacity(height * (rowBytes + 1))
        for row in 0..<height {
            scanlines.append(0)  // filter type None
            scanlines.append(contentsOf: pixels[row * rowBytes..<(row + 1) * rowBytes])
        }
        var streamSize = compressBound(uLong(scanlines.count))
        var stream = [UInt8](repeating: 0, count: Int(streamSize))
        let code = compress2(&stream, &streamSize, scanlines, uLong(scanlines.count), Z_NO_COMPRESSION)
        guard code == Z_OK else {
            throw PNGEncodingError(
                kind: .zlib, message: "zlib could not store the pixel data of a \(width)x\(height) image (code \(code))",
                call: "compress2")
        }
        scanlines = []
        var png = PNGSignature.bytes
        png.reserveCapacity(Int(streamSize) + 64 + 12 * (Int(streamSize) / idatChunkSize + 1))
        var header = bigEndian(UInt32(width)) + bigEndian(UInt32(height))
        header += [8, 6, 0, 0, 0]  // bit depth 8, colour type 6 (RGBA), deflate, adaptive filtering, no interlace
        appendChunk("IHDR", header[...], to: &png)
        var offset = 0
        while offset < Int(streamSize) {
            let end = min(offset + idatChunkSize, Int(streamSize))
            appendChunk("IDAT", stream[offset..<end], to: &png)
            offset = end
        }
        appendChunk("IEND", [][...], to: &png)
        return png
    }

    /// Appends one chunk: length, type, data, and the CRC-32 of type and data.
    private static func appendChunk(_ type: String, _ data: ArraySlice<UInt8>, to png: inout [UInt8]) {
        let typeBytes = Array(type.utf8)
        png += bigEndian(UInt32(data.count))
        png += typeBytes
        png += data
        var crc = crc32(0, typeBytes, uInt(typeBytes.count))
        crc = data.withUnsafeBufferPointer { crc32(crc, $0.baseAddress, uInt($0.count)) }
        png += bigEndian(UInt32(crc))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
         UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }
}
