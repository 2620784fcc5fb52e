import EmbeddedHTTP
import EmojiArtPNG

/// The response bodies and byte manipulations behind the ``ImageFault`` cases.
///
/// Each body is a streamed ``HTTPServerResponseBody`` written on the connection's thread with blocking
/// writes, so the fault happens on the wire (a short body, a body that never ends, a trickle), not just in what
/// the server believes it sent, and a client that reads slowly holds the writer back.
enum FaultBodies {
    /// Announces `png.count` bytes, writes the first half, then throws, so that the server closes the
    /// connection: the client sees a transfer that ends early (curl: `CURLE_PARTIAL_FILE`). The half is in the
    /// kernel's hands when the write returns, so the close comes after it.
    static func truncated(_ png: [UInt8]) -> HTTPServerResponseBody {
        .stream(contentLength: png.count) { writer in
            let half = png.prefix(png.count / 2)
            try writer.write(half)
            throw GalleryServerError(
                kind: .truncatedOnPurpose,
                message: "sent \(half.count) of \(png.count) bytes, then closed the connection (truncated fault)"
            )
        }
    }

    /// 64 KiB of fixed pseudo-random bytes: the endless fault's chunk.
    static let garbageChunk: [UInt8] = {
        var generator = SplitMix64(seed: 0x0BAD_F00D)
        var bytes = [UInt8]()
        bytes.reserveCapacity(64 * 1024)
        while bytes.count < 64 * 1024 {
            withUnsafeBytes(of: generator.next().littleEndian) { bytes.append(contentsOf: $0) }
        }
        return bytes
    }()

    /// A chunked body of garbage that never ends. Each write blocks until the kernel has taken the chunk, so
    /// at most one chunk beyond the socket buffers is ever in flight. The loop ends when a write fails (the
    /// client hung up, or the stopping server shut the connection down) or the server is stopping.
    static func endless(state: GalleryState) -> HTTPServerResponseBody {
        .stream(contentLength: nil) { writer in
            state.streamStarted()
            defer { state.streamEnded() }
            while !state.isStopping, !writer.serverIsStopping {
                try writer.write(garbageChunk)
            }
            throw GalleryServerError(kind: .serverStopping, message: "endless body stopped: the server is stopping")
        }
    }

    /// The full `png`, in 10 slices with pauses between them, so the transfer takes about
    /// `milliseconds` in all. Headers (with the full `Content-Length`) go out at once.
    static func slow(_ png: [UInt8], milliseconds: Int, state: GalleryState) -> HTTPServerResponseBody {
        let sliceCount = 10
        let sliceSize = (png.count + sliceCount - 1) / sliceCount
        let pauses = sliceCount - 1
        return .stream(contentLength: png.count) { writer in
            state.streamStarted()
            defer { state.streamEnded() }
            var offset = 0
            var slice = 0
            while offset < png.count {
                let end = min(offset + sliceSize, png.count)
                try writer.write(png[offset..<end])
                offset = end
                if offset < png.count {
                    // Spread the pauses so that their sum is `milliseconds`, remainder included.
                    let pause = milliseconds * (slice + 1) / pauses - milliseconds * slice / pauses
                    slice += 1
                    guard state.pause(milliseconds: pause) else {
                        throw GalleryServerError(kind: .serverStopping, message: "slow body stopped: the server is stopping")
                    }
                }
            }
        }
    }

    /// A valid PNG of about `megabytes` MiB: RGBA rows 2048 pixels wide of pseudo-random bytes (a pattern of
    /// 64 KiB + 1 bytes repeated), stored uncompressed: the file is the pixels' size, and making it costs
    /// copies, not the seconds of CPU compressing tens of MiB would (the tests make one beside other suites).
    static func largePNG(megabytes: Int) throws(PNGEncodingError) -> [UInt8] {
        let width = 2048
        let height = (megabytes << 20) / (width * 4)
        var generator = SplitMix64(seed: 0x1A_26E0)
        var pattern = [UInt8]()
        pattern.reserveCapacity(64 * 1024 + 8)
        while pattern.count <= 64 * 1024 {
            withUnsafeBytes(of: generator.next().littleEndian) { pattern.append(contentsOf: $0) }
        }
        pattern.removeLast(pattern.count - (64 * 1024 + 1))
        var pixels = [UInt8]()
        pixels.reserveCapacity(width * height * 4)
        while pixels.count < width * height * 4 {
            pixels.append(contentsOf: pattern.prefix(width * height * 4 - pixels.count))
        }
        return try PNGEncoder.encodeRGBA(width: width, height: height, pixels: pixels, compression: .stored)
    }

    /// `png` in slices of 64 KiB with its `Content-Length`: a large body written from the one shared copy.
    static func sliced(_ png: [UInt8]) -> HTTPServerResponseBody {
        .stream(contentLength: png.count) { writer in
            var offset = 0
            while offset < png.count {
                let end = min(offset + 64 * 1024, png.count)
                try writer.write(png[offset..<end])
                offset = end
            }
        }
    }

    /// `png` with one byte in the middle of its first IDAT chunk's data inverted and the chunk's
    /// CRC left unchanged: the signature and every length and type stay valid, so only a CRC check
    /// or a decode notices. Returns `png` unchanged if it has no non-empty IDAT chunk.
    static func corrupted(_ png: [UInt8]) -> [UInt8] {
        var bytes = png
        var offset = 8  // after the 8-byte signature
        while offset + 12 <= bytes.count {
            let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            let type = bytes[offset + 4..<offset + 8]
            if type.elementsEqual("IDAT".utf8), length > 0, offset + 8 + length <= bytes.count {
                bytes[offset + 8 + length / 2] ^= 0xFF
                return bytes
            }
            offset += 12 + length
        }
        return bytes
    }
}
