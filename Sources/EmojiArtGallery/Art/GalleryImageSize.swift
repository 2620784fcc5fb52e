import EmojiArtPNG

/// Which pictures a gallery serves: the book's full-size ones, or 16x16 ones for galleries of many thousands
/// of items (the soak, the scale benchmarks, the suite's burst tests), where painting full-size images would
/// cost more than the agent under test.
///
/// Both sizes are deterministic in (N, generation, stamp), so a test can compare a file with
/// ``GalleryServer/imageBytes(_:)`` byte for byte, and both change with the generation and the `changing`
/// fault's stamp, so server-side change is seen at either size.
public enum GalleryImageSize: String, Sendable, CaseIterable {
    /// 360x650 pictures of about 50 KB (``GalleryPainter``): tens of milliseconds to paint each.
    case full
    /// 16x16 pictures of about 110 bytes (``SmallPainter``): microseconds to paint each.
    case small

    /// The PNG for item N at `generation`, with the `changing` fault's `stamp` when there is one.
    func png(n: Int, generation: Int, stamp: Int? = nil) throws(PNGEncodingError) -> [UInt8] {
        switch self {
        case .full: try GalleryPainter.png(n: n, generation: generation, stamp: stamp)
        case .small: try SmallPainter.png(n: n, generation: generation, stamp: stamp)
        }
    }
}
