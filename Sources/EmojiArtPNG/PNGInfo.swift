/// The header facts of a PNG that passed validation, as its IHDR chunk states them (and libpng accepted).
public struct PNGInfo: Sendable, Equatable {
    /// Width in pixels, 1 or more.
    public let width: UInt32
    /// Height in pixels, 1 or more.
    public let height: UInt32
    /// Bits per sample (or per palette index): 1, 2, 4, 8 or 16.
    public let bitDepth: UInt8
    /// PNG colour type: 0 grey, 2 RGB, 3 palette, 4 grey + alpha, 6 RGBA (`PNG_COLOR_TYPE_*`).
    public let colorType: UInt8
    /// Whether the image is Adam7-interlaced (IHDR interlace method 1).
    public let interlaced: Bool

    /// Creates header facts. The validator is the usual source; tests and callers may build their own.
    public init(width: UInt32, height: UInt32, bitDepth: UInt8, colorType: UInt8, interlaced: Bool) {
        self.width = width
        self.height = height
        self.bitDepth = bitDepth
        self.colorType = colorType
        self.interlaced = interlaced
    }
}
