/// Upper bounds a PNG must respect before `PNGValidator` spends memory or time on it.
///
/// Every limit is checked from the IHDR and the chunk headers alone, so an image that declares itself
/// 100000x100000 is refused before a single pixel buffer exists. The same limits are handed to libpng
/// (`png_set_user_limits`, `png_set_chunk_malloc_max`, `png_set_chunk_cache_max`) as a second line.
///
/// Why the defaults are what they are: the gallery's images are 360x650 (234 Ki pixels, tens of KB).
/// 16384 per side and 64 Mi pixels are far above any real artwork (64 Mi pixels is an 8192x8192 square,
/// 512 MiB if decoded at 16-bit RGBA all at once) yet keep a hostile header from costing more than a
/// bounded decode. 16 MiB per chunk is half the HTTP client's default 32 MiB body limit: a real encoder
/// splits image data into many IDAT chunks (libpng uses 8 KiB), so only a forged length comes near it.
public struct PNGLimits: Sendable, Equatable {
    /// Widest image accepted, in pixels. Default 16384.
    public var maxWidth: UInt32
    /// Tallest image accepted, in pixels. Default 16384.
    public var maxHeight: UInt32
    /// Most pixels (width x height) accepted. Default 64 Mi (67108864).
    public var maxPixels: UInt64
    /// Largest chunk data length accepted, in bytes, and the most libpng may allocate for one ancillary
    /// chunk, decompressed (`png_set_chunk_malloc_max`). Default 16 MiB.
    public var maxChunkSize: UInt32
    /// How many ancillary chunks (text, sPLT, unknown) libpng keeps while reading
    /// (`png_set_chunk_cache_max`); more are dropped with a warning, not refused. Default 256: plenty for
    /// real files, and a file of a million tiny tEXt chunks cannot make libpng hoard them.
    public var maxStoredChunks: UInt32

    /// Creates limits; every parameter defaults to the value documented on its property.
    public init(
        maxWidth: UInt32 = 16_384,
        maxHeight: UInt32 = 16_384,
        maxPixels: UInt64 = 64 * 1024 * 1024,
        maxChunkSize: UInt32 = 16 * 1024 * 1024,
        maxStoredChunks: UInt32 = 256
    ) {
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
        self.maxPixels = maxPixels
        self.maxChunkSize = maxChunkSize
        self.maxStoredChunks = maxStoredChunks
    }

    /// The defaults: 16384x16384 at most, 64 Mi pixels, 16 MiB chunks, 256 stored ancillary chunks.
    public static let `default` = PNGLimits()
}
