/// How thoroughly `PNGValidator` checks a PNG: the `--verify structure|full` choice.
///
/// Both levels refuse absurd dimensions (see `PNGLimits`) before anything proportional to the image is
/// allocated, and both run libpng's own header checks.
public enum PNGVerification: String, Sendable, CaseIterable {
    /// The default: the signature, every chunk's length, type and CRC-32, chunk order (IHDR first, IDAT
    /// present and contiguous, IEND last with nothing after it), and the chunks up to the first IDAT read
    /// through libpng (`png_read_info`). Costs one pass of CRC-32 over the bytes plus a few microseconds of
    /// libpng set-up: cheap enough to run on every download and every file found on disk.
    case structure
    /// Everything `structure` checks, then a complete libpng decode of every row of every interlace pass
    /// and `png_read_end`. This also catches damage that a valid CRC hides (bytes changed and the CRC
    /// recomputed, or an encoder that wrote a broken zlib stream): the Adler-32 of the zlib stream and the
    /// amount of image data must be right. Costs a full decode (about a millisecond for 360x650 RGBA),
    /// in constant memory: one row buffer, whatever the height.
    case full
}
