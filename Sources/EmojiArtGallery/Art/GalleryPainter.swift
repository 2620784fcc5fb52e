import EmojiArtPNG

/// Paints the gallery's images: 360x650 PNGs, deterministic per (N, generation, stamp).
///
/// Each image is a vertical gradient in one of three colour pairs (chosen by N), a motif whose
/// kind, size, colour and position follow from N, a few sparkles, the number N in large
/// seven-segment digits, and film grain seeded by (N, generation, stamp). The grain is what makes
/// the files realistic in size (20-80 KB); without it a gradient compresses to a few KB.
/// Pure functions: no state, safe to call from any task.
enum GalleryPainter {
    /// Image width in pixels, as in the book's server.
    static let width = 360
    /// Image height in pixels, as in the book's server.
    static let height = 650

    /// The three background colour pairs (top, bottom): sunset, ocean, meadow.
    static let backgrounds: [(top: RGB, bottom: RGB)] = [
        (RGB(255, 170, 110), RGB(200, 60, 120)),
        (RGB(90, 205, 230), RGB(30, 55, 135)),
        (RGB(185, 235, 130), RGB(20, 115, 95)),
    ]

    /// Motif colours, bright enough to read on every background.
    static let motifColours = [RGB(255, 215, 70), RGB(255, 250, 240), RGB(255, 105, 80), RGB(130, 90, 220)]

    /// Grain parameters: about 1 pixel in 18 (14 of 256) moved by 10 levels. Chosen by measuring:
    /// they put the encoded files near 50 KB (47-54 KB for N = 1...29).
    static let grainDensity = 14
    static let grainStrength = 10

    /// The PNG for image N.
    ///
    /// - Parameters:
    ///   - n: the item number; drawn large, and it chooses colours, motif and layout.
    ///   - generation: content generation (``GalleryFaults/generation``); a different generation
    ///     gives different grain and, when not 0, a small "generation" number in the bottom left.
    ///   - stamp: an extra number drawn small in the bottom right (the `changing` fault's
    ///     per-request counter); nil draws nothing.
    static func png(n: Int, generation: Int, stamp: Int? = nil) throws(PNGEncodingError) -> [UInt8] {
        let canvas = paint(n: n, generation: generation, stamp: stamp)
        return try PNGEncoder.encodeRGBA(width: canvas.width, height: canvas.height, pixels: canvas.pixels)
    }

    /// The raw canvas for image N; see ``png(n:generation:stamp:)``.
    static func paint(n: Int, generation: Int, stamp: Int?) -> Canvas {
        var canvas = Canvas(width: width, height: height)
        let colourIndex = ((n - 1) % backgrounds.count + backgrounds.count) % backgrounds.count
        canvas.fillVerticalGradient(top: backgrounds[colourIndex].top, bottom: backgrounds[colourIndex].bottom)

        // Layout depends on N only, so a generation bump changes bytes but keeps the picture.
        var layout = SplitMix64(mixing: n, 0x4C41_594F)
        drawMotif(n: n, on: &canvas, using: &layout)
        drawSparkles(on: &canvas, using: &layout)
        drawNumber(n, on: &canvas)
        drawFooter(generation: generation, stamp: stamp, on: &canvas)

        var grain = SplitMix64(mixing: n, generation, stamp ?? -1)
        canvas.addGrain(using: &grain, density: grainDensity, strength: grainStrength)
        return canvas
    }

    /// The motif in the upper half: its kind cycles with N, its size, place and colour are drawn
    /// from the layout generator.
    private static func drawMotif(n: Int, on canvas: inout Canvas, using layout: inout SplitMix64) {
        let kinds = ArtShape.allCases
        let shape = kinds[((n - 1) % kinds.count + kinds.count) % kinds.count]
        let size = Double(layout.next(in: 55...105))
        let centreX = Double(layout.next(in: Int(size) + 25...width - Int(size) - 25))
        let centreY = Double(layout.next(in: Int(size) + 35...340 - Int(size)))
        let colour = motifColours[layout.next(in: 0...motifColours.count - 1)]
        let reach = Int(size) + 4
        let bounds = (Int(centreX) - reach, Int(centreY) - reach, Int(centreX) + reach, Int(centreY) + reach)
        // A soft shadow first, then the motif itself.
        canvas.fill(RGB(0, 0, 0), opacity: 0.18, bounds: (bounds.0 + 8, bounds.1 + 10, bounds.2 + 8, bounds.3 + 10)) { x, y in
            shape.distance(dx: x - centreX - 8, dy: y - centreY - 10, size: size)
        }
        canvas.fill(colour, opacity: 0.92, bounds: bounds) { x, y in
            shape.distance(dx: x - centreX, dy: y - centreY, size: size)
        }
    }

    /// Three to six small translucent white dots scattered over the upper part.
    private static func drawSparkles(on canvas: inout Canvas, using layout: inout SplitMix64) {
        for _ in 0..<layout.next(in: 3...6) {
            let radius = Double(layout.next(in: 4...11))
            let x = Double(layout.next(in: 15...width - 15))
            let y = Double(layout.next(in: 15...360))
            let reach = Int(radius) + 2
            canvas.fill(RGB(255, 255, 255), opacity: 0.6, bounds: (Int(x) - reach, Int(y) - reach, Int(x) + reach, Int(y) + reach)) { px, py in
                ((px - x) * (px - x) + (py - y) * (py - y)).squareRoot() - radius
            }
        }
    }

    /// N in large digits, centred in the lower part, with a drop shadow; scaled down to fit when
    /// N has many digits.
    private static func drawNumber(_ n: Int, on canvas: inout Canvas) {
        var font = SevenSegmentFont(digitWidth: 78, digitHeight: 150, thickness: 18, spacing: 16)
        let available = Double(width - 40)
        if font.width(of: n) > available {
            font = font.scaled(by: available / font.width(of: n))
        }
        let x = ((Double(width) - font.width(of: n)) / 2).rounded()
        let y = 395 + ((150 - font.digitHeight) / 2).rounded()
        font.draw(n, on: &canvas, x: x + 5, y: y + 6, colour: RGB(0, 0, 0), opacity: 0.3)
        font.draw(n, on: &canvas, x: x, y: y, colour: RGB(255, 255, 255), opacity: 0.95)
    }

    /// Small numbers along the bottom edge: the generation (left, when not 0) and the stamp
    /// (right, when set), so a human can tell variants apart.
    private static func drawFooter(generation: Int, stamp: Int?, on canvas: inout Canvas) {
        let font = SevenSegmentFont(digitWidth: 13, digitHeight: 24, thickness: 4, spacing: 4)
        let y = Double(height - 24 - 14)
        if generation != 0 {
            font.draw(generation, on: &canvas, x: 14, y: y, colour: RGB(255, 255, 255), opacity: 0.85)
        }
        if let stamp {
            font.draw(stamp, on: &canvas, x: Double(width - 14) - font.width(of: stamp), y: y, colour: RGB(255, 255, 255), opacity: 0.85)
        }
    }
}
