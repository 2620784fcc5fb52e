import EmojiArtPNG

/// Paints the small images (``GalleryImageSize/small``, `emojiart-gallery --small`, `export --small`): 16x16
/// PNGs of about 106 bytes, distinct for every N, so that a gallery of 100,000 assets is cheap to make and to
/// serve.
///
/// The 24 low bits of N are the colour of the left half and their complement the colour of the right
/// half: no two N up to 16,777,215 (far above the gallery's 100,000) share an image. Two flat halves
/// compress to almost nothing, which is the point. A generation other than 0, or a stamp, colours the
/// bottom row (generation on the left, stamp on the right), so changed content has changed bytes; with
/// neither, the image is exactly what `export --small` has always written.
enum SmallPainter {
    /// Width and height in pixels.
    static let side = 16

    /// The PNG for item N at `generation`, with the `changing` fault's `stamp` when there is one.
    static func png(n: Int, generation: Int = 0, stamp: Int? = nil) throws(PNGEncodingError) -> [UInt8] {
        let left = colour(n)
        let right = (255 &- left.0, 255 &- left.1, 255 &- left.2)
        let marked = generation != 0 || stamp != nil
        var pixels = [UInt8]()
        pixels.reserveCapacity(side * side * 4)
        for y in 0..<side {
            let bottomRow = marked && y == side - 1
            for x in 0..<side {
                let rgb: (UInt8, UInt8, UInt8)
                if x < side / 2 {
                    rgb = bottomRow ? colour(generation) : left
                } else {
                    rgb = bottomRow ? colour(stamp ?? 0) : right
                }
                pixels += [rgb.0, rgb.1, rgb.2, 255]
            }
        }
        return try PNGEncoder.encodeRGBA(width: side, height: side, pixels: pixels)
    }

    /// The 24 low bits of `value` as a colour.
    private static func colour(_ value: Int) -> (UInt8, UInt8, UInt8) {
        (UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value >> 16))
    }
}
