import EmojiArtPNG

/// Paints the small images of `emojiart-gallery export --small`: 16x16 PNGs of about 106 bytes,
/// distinct for every N, so that a gallery of 100,000 assets is cheap to make and to serve.
///
/// The 24 low bits of N are the colour of the left half and their complement the colour of the right
/// half: no two N up to 16,777,215 (far above the gallery's 100,000) share an image. Two flat halves
/// compress to almost nothing, which is the point.
enum SmallPainter {
    /// Width and height in pixels.
    static let side = 16

    /// The PNG for item N.
    static func png(n: Int) throws(PNGEncodingError) -> [UInt8] {
        let low = (UInt8(truncatingIfNeeded: n), UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n >> 16))
        var pixels = [UInt8]()
        pixels.reserveCapacity(side * side * 4)
        for _ in 0..<side {
            for x in 0..<side {
                if x < side / 2 {
                    pixels += [low.0, low.1, low.2, 255]
                } else {
                    pixels += [255 &- low.0, 255 &- low.1, 255 &- low.2, 255]
                }
            }
        }
        return try PNGEncoder.encodeRGBA(width: side, height: side, pixels: pixels)
    }
}
