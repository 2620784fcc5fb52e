/// Draws decimal numbers as seven-segment digits, the gallery's only font.
///
/// A built-in font keeps the server free of font files and text rendering libraries, and makes
/// the images deterministic. Segments are rounded boxes drawn with ``Canvas/fill(_:opacity:bounds:distance:)``,
/// so they are anti-aliased.
struct SevenSegmentFont {
    /// Width of one digit cell, in pixels.
    var digitWidth: Double
    /// Height of one digit cell.
    var digitHeight: Double
    /// Thickness of a segment.
    var thickness: Double
    /// Space between digit cells.
    var spacing: Double

    /// The segments lit for each digit, bit 0 = a (top), then b, c, d, e, f, g (middle),
    /// clockwise from the top as on a calculator display.
    private static let segmentsByDigit: [UInt8] = [
        0b011_1111, 0b000_0110, 0b101_1011, 0b100_1111, 0b110_0110,
        0b110_1101, 0b111_1101, 0b000_0111, 0b111_1111, 0b110_1111,
    ]

    /// The font scaled by `factor` (all four measures).
    func scaled(by factor: Double) -> SevenSegmentFont {
        SevenSegmentFont(
            digitWidth: digitWidth * factor, digitHeight: digitHeight * factor,
            thickness: thickness * factor, spacing: spacing * factor
        )
    }

    /// The width `number` takes when drawn.
    func width(of number: Int) -> Double {
        let count = Double(String(number.magnitude).count)
        return count * digitWidth + (count - 1) * spacing
    }

    /// Draws `number` (its magnitude) with its top-left corner at (x, y).
    func draw(_ number: Int, on canvas: inout Canvas, x: Double, y: Double, colour: RGB, opacity: Double) {
        var left = x
        for character in String(number.magnitude) {
            guard let digit = character.wholeNumberValue else { continue }
            let lit = Self.segmentsByDigit[digit]
            // A 1 lights only the right-hand segments; centre them in the cell so it does not lean.
            let shift = digit == 1 ? (digitWidth - thickness) / 2 : 0
            for (segment, box) in segmentBoxes(left: left - shift, top: y).enumerated() where lit & (1 << segment) != 0 {
                canvas.fill(
                    colour,
                    opacity: opacity,
                    bounds: (
                        Int((box.centreX - box.halfWidth).rounded(.down)) - 1, Int((box.centreY - box.halfHeight).rounded(.down)) - 1,
                        Int((box.centreX + box.halfWidth).rounded(.up)) + 1, Int((box.centreY + box.halfHeight).rounded(.up)) + 1
                    )
                ) { px, py in
                    ArtShape.roundedBox(
                        dx: px - box.centreX, dy: py - box.centreY,
                        halfWidth: box.halfWidth, halfHeight: box.halfHeight, cornerRadius: thickness / 2
                    )
                }
            }
            left += digitWidth + spacing
        }
    }

    /// The seven segment rectangles (a...g) of a digit cell at (left, top).
    private func segmentBoxes(left: Double, top: Double) -> [(centreX: Double, centreY: Double, halfWidth: Double, halfHeight: Double)] {
        let half = thickness / 2
        // Horizontal segments stop short of the verticals, leaving the small gaps of a real display.
        let horizontalHalf = digitWidth / 2 - thickness * 0.75
        let verticalHalf = digitHeight / 4 - thickness * 0.55
        let midX = left + digitWidth / 2
        let rightX = left + digitWidth - half
        let leftX = left + half
        let upperY = top + digitHeight / 4 + thickness / 4
        let lowerY = top + digitHeight * 3 / 4 - thickness / 4
        return [
            (midX, top + half, horizontalHalf, half),                 // a: top
            (rightX, upperY, half, verticalHalf),                     // b: upper right
            (rightX, lowerY, half, verticalHalf),                     // c: lower right
            (midX, top + digitHeight - half, horizontalHalf, half),   // d: bottom
            (leftX, lowerY, half, verticalHalf),                      // e: lower left
            (leftX, upperY, half, verticalHalf),                      // f: upper left
            (midX, top + digitHeight / 2, horizontalHalf, half),      // g: middle
        ]
    }
}
