/// An 8-bit sRGB colour without alpha, as the gallery's art uses it.
struct RGB: Sendable, Equatable {
    var red: UInt8
    var green: UInt8
    var blue: UInt8

    init(_ red: UInt8, _ green: UInt8, _ blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// The colour `fraction` of the way from `self` to `other` (0 = self, 1 = other).
    func mixed(with other: RGB, _ fraction: Double) -> RGB {
        func channel(_ a: UInt8, _ b: UInt8) -> UInt8 {
            UInt8((Double(a) + (Double(b) - Double(a)) * fraction).rounded().clamped(to: 0...255))
        }
        return RGB(channel(red, other.red), channel(green, other.green), channel(blue, other.blue))
    }
}
