#if canImport(Glibc)
import Glibc
#endif

/// Decides whether bytes from the network or from disk are a real PNG, and says why not.
///
/// Pure and nonisolated: no state, no actor, safe to call from any thread or task at once. The agent
/// hands bytes or a file to it off its actors and comes back with the verdict. The work is
/// proportional to the input for `.structure` and to the pixels for `.full`; memory stays constant
/// (no copy of the input, one row buffer for decoding; a file is read through fixed buffers), and `PNGLimits` is
/// enforced from the header before anything is decoded.
///
/// Bytes in memory and a file get one check, the same: the chunk walk (`PNGChunkWalk`) takes bytes in pieces, the
/// whole buffer as one piece or the file block by block, then libpng reads them (`LibPNGReader`), from the buffer
/// or from the file.
public enum PNGValidator {
    /// Validates `bytes` as one complete PNG and returns its header facts, or throws the first defect.
    ///
    /// `.structure` walks the signature and every chunk (length, type, CRC-32, order; IHDR within
    /// `limits`), then reads the chunks before the image data through libpng (`png_read_info`), so libpng's
    /// IHDR rules apply too. `.full` does the same and then decodes every row with libpng and reads to the
    /// end (`png_read_row`, `png_read_end`): only it notices image data that was damaged under a valid CRC.
    /// Trailing bytes after IEND are a defect (`dataAfterIEND`): the agent stores exact images.
    ///
    /// What is tolerated, as libpng tolerates it: problems libpng calls "benign" in ancillary chunks
    /// before the image data (an odd ICC profile, a bad text keyword) are warnings, not defects, since the
    /// image itself is intact. From the image data on, `.full` is strict: a zlib Adler-32 mismatch, extra
    /// compressed data or too much image data is a defect.
    ///
    /// Cost on a 2-core x86 machine (release build): about 5 µs for a tiny PNG and 45 µs for a 50 KB
    /// one in `.structure` (CRC-32 over the bytes dominates); about 6 ms for a 360x650 RGBA image in `.full`.
    public static func validate(
        _ bytes: [UInt8], level: PNGVerification = .structure, limits: PNGLimits = .default
    ) throws(PNGDefect) -> PNGInfo {
        try bytes.withUnsafeBufferPointer { (buffer) throws(PNGDefect) -> PNGInfo in
            try validate(buffer, level: level, limits: limits)
        }
    }

    /// ``validate(_:level:limits:)`` for bytes that are not an array.
    public static func validate(
        _ buffer: UnsafeBufferPointer<UInt8>, level: PNGVerification = .structure, limits: PNGLimits = .default
    ) throws(PNGDefect) -> PNGInfo {
        let info = try PNGChunkWalk.walk(buffer, limits: limits)
        try LibPNGReader.read(buffer, decodeRows: level == .full, limits: limits)
        return info
    }

    /// The size of the blocks a file is read in for the chunk walk.
    static let fileBlockSize = 64 * 1024

    /// ``validate(_:level:limits:)`` for the PNG in the open file `fd`: its first `size` bytes (the size the caller
    /// found), read with `pread` (the file's offset is left alone) in blocks of 64 KiB, each handed to `observe` (a
    /// digest, say) and to the chunk walk, then read again through libpng's own 64 KiB buffer. Memory does not
    /// grow with the file's size. The same bytes in memory would get exactly the same verdict, and the same
    /// defect; a file that ends before `size` bytes (it changed while it was read) is `truncated`. `observe` sees
    /// every byte, in order, when the PNG is valid; after a defect it may have seen only the first ones.
    public static func validate(
        file fd: Int32, size: Int, level: PNGVerification = .structure, limits: PNGLimits = .default,
        observing observe: (UnsafeBufferPointer<UInt8>) -> Void = { _ in }
    ) throws(PNGFileFailure) -> PNGInfo {
        var walk = PNGChunkWalk(count: size, limits: limits)
        let block = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: fileBlockSize)
        defer { block.deallocate() }
        while walk.consumed < size {
            let offset = walk.consumed
            let count = pread(fd, block.baseAddress, min(block.count, size - offset), off_t(offset))
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(call: "pread", errno: errno)
            }
            guard count > 0 else {
                throw .defect(PNGDefect(
                    .truncated, "the file ends after \(offset) of its \(size) bytes (it changed while it was read?)",
                    offset: offset))
            }
            let piece = UnsafeBufferPointer(rebasing: block[..<count])
            observe(piece)
            do throws(PNGDefect) { try walk.consume(piece) } catch { throw .defect(error) }
        }
        let info: PNGInfo
        do throws(PNGDefect) { info = try walk.finish() } catch { throw .defect(error) }
        try LibPNGReader.read(file: fd, decodeRows: level == .full, limits: limits)
        return info
    }
}
