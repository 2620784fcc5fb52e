import CShims

/// libpng's view of a PNG: `png_read_info`, and for `.full` every row and `png_read_end`.
///
/// The libpng calls run in C (`emojiart_png_read` and `emojiart_png_read_file` in CShims), below a `setjmp`,
/// because libpng reports errors by `longjmp`, which Swift frames cannot survive. Each call creates and destroys
/// its own libpng structures, so any number of threads may read at once. Bytes in memory are read in place, never
/// copied; a file is read through one 64 KiB buffer, whatever its size.
enum LibPNGReader {
    /// Reads `bytes` through libpng with `limits` applied, decoding every row when `decodeRows` is set.
    /// Throws the libpng failure as a defect; returns nothing, because the chunk walk already has the facts.
    static func read(
        _ bytes: UnsafeBufferPointer<UInt8>, decodeRows: Bool, limits: PNGLimits
    ) throws(PNGDefect) {
        var options = Self.options(decodeRows: decodeRows, limits: limits)
        var result = emojiart_png_read_result()
        let status = emojiart_png_read(bytes.baseAddress, bytes.count, &options, &result)
        try check(status, result)
    }

    /// ``read(_:decodeRows:limits:)`` for the PNG in the open file `fd`, from its first byte (`pread`: the file's
    /// offset is left alone). A failed read is `.unreadable`, not a defect: nothing is known of the bytes.
    static func read(file fd: Int32, decodeRows: Bool, limits: PNGLimits) throws(PNGFileFailure) {
        var options = Self.options(decodeRows: decodeRows, limits: limits)
        var result = emojiart_png_read_result()
        let status = emojiart_png_read_file(fd, &options, &result)
        if status == EMOJIART_PNG_READ_FAILED { throw .unreadable(call: "pread", errno: result.read_errno) }
        do {
            try check(status, result)
        } catch {
            throw .defect(error)
        }
    }

    /// `limits` as libpng takes them. libpng reads 0 as "no limit" for the chunk limits, and allows at most
    /// 2^31-1 for dimensions.
    private static func options(decodeRows: Bool, limits: PNGLimits) -> emojiart_png_read_options {
        emojiart_png_read_options(
            max_width: min(limits.maxWidth, 0x7FFF_FFFF),
            max_height: min(limits.maxHeight, 0x7FFF_FFFF),
            max_chunk_malloc: max(limits.maxChunkSize, 1),
            max_cached_chunks: max(limits.maxStoredChunks, 1),
            decode_rows: decodeRows ? 1 : 0)
    }

    /// Throws the defect a libpng read that ended with `status` found.
    private static func check(_ status: emojiart_png_status, _ result: emojiart_png_read_result) throws(PNGDefect) {
        guard status != EMOJIART_PNG_OK else { return }

        let message = cString(result.message)
        let warning = cString(result.first_warning)
        let chunk = ChunkType(rawValue: result.failed_chunk)
        // libpng's IHDR check warns with the reason, then fails with "Invalid IHDR data": keep both.
        let detail = warning.isEmpty || warning == message ? message : "\(message) (libpng warned: \(warning))"
        switch status {
        case EMOJIART_PNG_OUT_OF_MEMORY:
            // The C side names the allocation that failed at the start of its message.
            let function = ["png_create_read_struct", "png_create_info_struct"].first { message.hasPrefix($0) }
            throw PNGDefect(.outOfMemory, "out of memory: \(message)", libpngFunction: function ?? "malloc")
        case EMOJIART_PNG_INFO_FAILED where chunk == .header:
            throw PNGDefect(.badIHDR, "libpng rejects IHDR: \(detail)", libpngFunction: "png_read_info")
        case EMOJIART_PNG_INFO_FAILED:
            let place = result.failed_chunk == 0 ? "the data" : "chunk \(chunk)"
            throw PNGDefect(
                .badChunkData, "libpng rejects \(place) before the image data: \(detail)",
                libpngFunction: "png_read_info")
        case EMOJIART_PNG_ROWS_FAILED:
            let passes = max(Int(result.passes), 1)
            let total = passes * Int(result.height)
            throw PNGDefect(
                .decodeFailed,
                "image data does not decode after \(result.rows_decoded) of \(total) rows"
                    + (passes > 1 ? " (\(passes) interlace passes)" : "") + ": \(detail)",
                libpngFunction: "png_read_row")
        default:
            throw PNGDefect(
                .decodeFailed, "libpng fails after the last row, in chunk \(chunk): \(detail)",
                libpngFunction: "png_read_end")
        }
    }

    /// The text of a NUL-terminated C `char` array that Swift imported as a tuple.
    private static func cString<Tuple>(_ tuple: Tuple) -> String {
        withUnsafeBytes(of: tuple) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
