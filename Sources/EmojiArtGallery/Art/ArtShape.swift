/// The shapes an image's motif can take, as signed distance functions.
///
/// Each distance is in pixels, negative inside, measured from a shape of "radius" `size`
/// centred at the origin, with y growing downwards (screen coordinates). Distances use only
/// `+ - * /` and `sqrt` (correctly rounded in IEEE 754), never `hypot` or trigonometry from libm,
/// so the pixels are identical on every machine.
enum ArtShape: CaseIterable, Sendable {
    case circle
    case ring
    case roundedSquare
    case triangle
    case diamond

    /// Signed distance from `(dx, dy)` (relative to the centre) to the shape's edge.
    func distance(dx: Double, dy: Double, size: Double) -> Double {
        switch self {
        case .circle:
            return (dx * dx + dy * dy).squareRoot() - size
        case .ring:
            let thickness = size * 0.28
            return abs((dx * dx + dy * dy).squareRoot() - (size - thickness)) - thickness
        case .roundedSquare:
            return Self.roundedBox(dx: dx, dy: dy, halfWidth: size * 0.85, halfHeight: size * 0.85, cornerRadius: size * 0.25)
        case .triangle:
            return Self.equilateralTriangle(dx: dx, dy: dy, size: size)
        case .diamond:
            return (abs(dx) + abs(dy) - size) * 0.707_106_781_186_547_6
        }
    }

    /// Distance to an axis-aligned box with rounded corners (also used for the digits' segments).
    static func roundedBox(dx: Double, dy: Double, halfWidth: Double, halfHeight: Double, cornerRadius: Double) -> Double {
        let qx = abs(dx) - halfWidth + cornerRadius
        let qy = abs(dy) - halfHeight + cornerRadius
        let outside = (max(qx, 0) * max(qx, 0) + max(qy, 0) * max(qy, 0)).squareRoot()
        return outside + min(max(qx, qy), 0) - cornerRadius
    }

    /// Distance to an equilateral triangle pointing up whose circumradius is about `size`.
    private static func equilateralTriangle(dx: Double, dy: Double, size: Double) -> Double {
        // The classic formula works with y pointing up; the canvas's y points down.
        let k = 3.0.squareRoot()
        let r = size * 0.87
        var px = abs(dx) - r
        var py = -dy + r / k
        if px + k * py > 0 {
            (px, py) = ((px - k * py) / 2, (-k * px - py) / 2)
        }
        px -= min(max(px, -2 * r), 0)
        let length = (px * px + py * py).squareRoot()
        return py < 0 ? length : -length
    }
}
