/// An opaque RGBA pixel buffer with the few drawing operations the gallery's art needs.
///
/// Shapes are drawn from signed distance functions (negative inside, in pixels), which gives
/// one-pixel anti-aliased edges for free. All drawing is deterministic integer/float arithmetic,
/// so the same calls produce the same bytes everywhere. Alpha is always 255.
struct Canvas {
    let width: Int
    let height: Int
    /// `width * height * 4` bytes, rows top to bottom, R G B A.
    private(set) var pixels: [UInt8]

    /// A canvas filled with opaque black.
    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        pixels.withUnsafeMutableBufferPointer { buffer in
            var index = 3
            while index < buffer.count {
                buffer[index] = 255
                index += 4
            }
        }
        self.pixels = pixels
    }

    /// Fills the whole canvas with a vertical gradient from `top` (row 0) to `bottom` (last row).
    mutating func fillVerticalGradient(top: RGB, bottom: RGB) {
        let width = self.width
        let height = self.height
        pixels.withUnsafeMutableBufferPointer { buffer in
            for y in 0..<height {
                let colour = top.mixed(with: bottom, height > 1 ? Double(y) / Double(height - 1) : 0)
                var index = y * width * 4
                let end = index + width * 4
                while index < end {
                    buffer[index] = colour.red
                    buffer[index + 1] = colour.green
                    buffer[index + 2] = colour.blue
                    index += 4
                }
            }
        }
    }

    /// Blends `colour` at `opacity` (0...1) over every pixel inside a shape.
    ///
    /// - Parameters:
    ///   - bounds: the pixel rectangle to visit (clipped to the canvas); the shape must lie inside it.
    ///   - distance: the shape's signed distance at a pixel centre: negative inside, positive
    ///     outside, in pixels. Coverage ramps over one pixel across the edge (anti-aliasing).
    mutating func fill(
        _ colour: RGB,
        opacity: Double,
        bounds: (minX: Int, minY: Int, maxX: Int, maxY: Int),
        distance: (_ x: Double, _ y: Double) -> Double
    ) {
        let minX = max(bounds.minX, 0)
        let maxX = min(bounds.maxX, width - 1)
        let minY = max(bounds.minY, 0)
        let maxY = min(bounds.maxY, height - 1)
        guard minX <= maxX, minY <= maxY else { return }
        let width = self.width
        pixels.withUnsafeMutableBufferPointer { buffer in
            for y in minY...maxY {
                for x in minX...maxX {
                    let coverage = (0.5 - distance(Double(x) + 0.5, Double(y) + 0.5)).clamped(to: 0...1)
                    guard coverage > 0 else { continue }
                    // Alpha in 0...256 so that full coverage replaces the pixel exactly.
                    let alpha = Int((coverage * opacity * 256).rounded())
                    let index = (y * width + x) * 4
                    buffer[index] = Self.blend(colour.red, over: buffer[index], alpha: alpha)
                    buffer[index + 1] = Self.blend(colour.green, over: buffer[index + 1], alpha: alpha)
                    buffer[index + 2] = Self.blend(colour.blue, over: buffer[index + 2], alpha: alpha)
                }
            }
        }
    }

    /// Adds film-like grain: a random fraction of pixels is nudged lighter or darker by the same
    /// amount on all three channels.
    ///
    /// Grain is what gives the images realistic sizes (tens of KB): a flat gradient compresses
    /// to almost nothing. `density` (0...255, out of 256) sets how many pixels are touched and
    /// `strength` how far; together they set the file size.
    mutating func addGrain(using generator: inout SplitMix64, density: Int, strength: Int) {
        pixels.withUnsafeMutableBufferPointer { buffer in
            var bits: UInt64 = 0
            var bitsLeft = 0
            var index = 0
            while index < buffer.count {
                if bitsLeft == 0 {
                    bits = generator.next()
                    bitsLeft = 4
                }
                // 16 bits per pixel: 8 decide whether it is touched, 1 the sign, the rest unused.
                let sample = Int(bits & 0xFFFF)
                bits >>= 16
                bitsLeft -= 1
                if sample & 0xFF < density {
                    let delta = sample & 0x100 == 0 ? strength : -strength
                    buffer[index] = Self.nudge(buffer[index], by: delta)
                    buffer[index + 1] = Self.nudge(buffer[index + 1], by: delta)
                    buffer[index + 2] = Self.nudge(buffer[index + 2], by: delta)
                }
                index += 4
            }
        }
    }

    private static func blend(_ source: UInt8, over destination: UInt8, alpha: Int) -> UInt8 {
        UInt8((Int(source) * alpha + Int(destination) * (256 - alpha)) >> 8)
    }

    private static func nudge(_ value: UInt8, by delta: Int) -> UInt8 {
        UInt8((Int(value) + delta).clamped(to: 0...255))
    }
}
