import CPNG

/// Encodes raw pixels as PNG files with libpng's simplified write API, or, uncompressed, with zlib's stored blocks.
///
/// The simplified API (`png_image_write_to_memory`) reports failure through a return value and a
/// message in the `png_image` structure instead of `longjmp`, so it is safe to call from Swift
/// without a C shim. Encoding is a pure function: no shared state, callable from any thread.
public enum PNGEncoder {
    /// How the pixel data is deflated.
    public enum Compression: Sendable {
        /// libpng's choice: rows filtered, zlib's default level. Small files; tens of milliseconds a picture.
        case standard
        /// Rows unfiltered, in deflate's stored blocks: the file is the pixels' size and a few bytes per
        /// 64 KiB, and making it costs a copy and two checksums. For bodies of tens of MiB that only need to be
        /// valid PNGs (the gallery's `large` fault), where compressing them would cost seconds of CPU.
        case stored
    }

    /// Encodes an 8-bit RGBA image (straight, not premultiplied, alpha) as a complete PNG file.
    ///
    /// `.standard` uses the two-call pattern of `png_image_write_to_memory`: the first call (no buffer)
    /// compresses once to learn the exact size, the second writes into a buffer of that size. The
    /// image is compressed twice; that is the price of never over-allocating or guessing a bound.
    ///
    /// - Parameters:
    ///   - width: pixels per row, 1 or more.
    ///   - height: rows, 1 or more.
    ///   - pixels: `width * height * 4` bytes, rows top to bottom, each pixel R, G, B, A.
    ///   - compression: how the pixel data is deflated.
    /// - Returns: the PNG file's bytes, signature first.
    /// - Throws: ``PNGEncodingError`` when the dimensions or buffer are invalid, or libpng or zlib fails.
    public static func encodeRGBA(
        width: Int, height: Int, pixels: [UInt8], compression: Compression = .standard
    ) throws(PNGEncodingError) -> [UInt8] {
        // PNG dimensions are 31-bit; the row stride (width * 4) must fit libpng's png_int_32.
        guard width > 0, height > 0, width <= Int(Int32.max) / 4, height <= Int(Int32.max) else {
            throw PNGEncodingError(
                kind: .invalidDimensions,
                message: "image is \(width)x\(height); both sides must be between 1 and 2^31-1 (width at most 2^29-1)"
            )
        }
        let (expected, overflow) = width.multipliedReportingOverflow(by: height * 4)
        guard !overflow, pixels.count == expected else {
            throw PNGEncodingError(
                kind: .bufferSizeMismatch,
                message: "a \(width)x\(height) RGBA image needs \(overflow ? "more than Int.max" : String(expected)) bytes, got \(pixels.count)"
            )
        }

        if compression == .stored {
            return try StoredPNGWriter.encodeRGBA(width: width, height: height, pixels: pixels)
        }

        var image = png_image()
        image.version = png_uint_32(PNG_IMAGE_VERSION)
        image.width = png_uint_32(width)
        image.height = png_uint_32(height)
        // PNG_FORMAT_RGBA is a compound macro Swift does not import; it is these two flags.
        image.format = png_uint_32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA)
        let rowStride = png_int_32(width * 4)

        // Array.withUnsafeBytes is `rethrows`, not typed; carry the error out in a Result.
        let result = pixels.withUnsafeBytes { source -> Result<[UInt8], PNGEncodingError> in
            // Call 1: no buffer; libpng compresses and stores the size it would need.
            var size: png_alloc_size_t = 0
            guard png_image_write_to_memory(&image, nil, &size, 0, source.baseAddress, rowStride, nil) != 0, size > 0 else {
                return .failure(.fromLibpng(call: "png_image_write_to_memory", image: &image, phase: "measuring"))
            }
            // Call 2: exactly that much memory; libpng fills it and stores the count written.
            var capacity = size
            var output = [UInt8](repeating: 0, count: Int(size))
            let written = output.withUnsafeMutableBytes { destination in
                png_image_write_to_memory(&image, destination.baseAddress, &capacity, 0, source.baseAddress, rowStride, nil)
            }
            guard written != 0 else {
                return .failure(.fromLibpng(call: "png_image_write_to_memory", image: &image, phase: "writing"))
            }
            // The second pass compresses the same input, so it fits; trim in case it came out shorter.
            output.removeSubrange(Int(capacity)...)
            return .success(output)
        }
        return try result.get()
    }
}

/// Why ``PNGEncoder`` could not produce a PNG.
///
/// Carries a machine-readable ``kind``, a human ``message``, and for libpng failures the C
/// function's name and libpng's own message (from `png_image.message`).
public struct PNGEncodingError: Error, Sendable, CustomStringConvertible {
    /// The broad reason, for code that branches on it.
    public enum Kind: String, Sendable {
        /// Width or height is zero, negative, or larger than PNG allows.
        case invalidDimensions
        /// The pixel buffer is not exactly `width * height * 4` bytes.
        case bufferSizeMismatch
        /// libpng reported an error (out of memory, internal limit, ...).
        case libpng
        /// zlib reported an error (out of memory) while storing the pixel data.
        case zlib
    }

    /// The broad reason.
    public var kind: Kind
    /// What went wrong, in words a user can act on.
    public var message: String
    /// The C function that failed, e.g. `png_image_write_to_memory`; nil for argument checks.
    public var call: String?
    /// libpng's message from `png_image.message`, when it set one.
    public var libpngMessage: String?

    /// Creates an error; `call` and `libpngMessage` are for failures inside libpng.
    public init(kind: Kind, message: String, call: String? = nil, libpngMessage: String? = nil) {
        self.kind = kind
        self.message = message
        self.call = call
        self.libpngMessage = libpngMessage
    }

    /// One line: kind, message, and the C call with libpng's message when there is one.
    public var description: String {
        var text = "PNG encoding failed (\(kind.rawValue)): \(message)"
        if let call { text += " [\(call)" + (libpngMessage.map { ": \($0)" } ?? "") + "]" }
        return text
    }

    /// Builds a `.libpng` error from a failed simplified-API call, and releases the image's
    /// libpng state (`png_image_free`) so nothing leaks.
    static func fromLibpng(call: String, image: inout png_image, phase: String) -> PNGEncodingError {
        // png_image.message is a fixed-size, NUL-terminated char[64] imported as a tuple.
        let text = withUnsafeBytes(of: image.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        png_image_free(&image)
        return PNGEncodingError(
            kind: .libpng,
            message: "libpng failed while \(phase) a \(image.width)x\(image.height) image",
            call: call,
            libpngMessage: text.isEmpty ? nil : text
        )
    }
}
