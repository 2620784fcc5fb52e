import FoundationEssentials

/// The gallery's items for one server lifetime: names, urls, prices and checksums for N = 1...count.
///
/// Names and prices are pure functions of N, so every server agrees on them. Checksums are random
/// UUIDs made when the catalog is created (once per server), as in the book's server; they are
/// opaque tags and never change while the server runs.
struct GalleryCatalog: Sendable {
    /// The unique items, unshuffled, index i holds N = i + 1.
    let items: [GalleryItem]

    /// Titles for the emoji-art pieces; item N is `titles[(N - 1) % titles.count] + " N"`.
    static let titles = [
        "Sunrise", "Sailboat", "Cactus", "Rocket", "Koi", "Lantern", "Mountain", "Tulip", "Comet",
        "Owl", "Lighthouse", "Cherry", "Volcano", "Whale", "Rainbow", "Snail", "Balloon",
    ]

    /// Makes the catalog for `count` items with fresh random checksums.
    ///
    /// The checksums are version-4 UUIDs drawn from a generator seeded once from the system's
    /// random source, rather than one `UUID()` call each: a `--count 100000` server starts
    /// several times faster, and the tags are just as unpredictable from one server to the next.
    init(count: Int) {
        var system = SystemRandomNumberGenerator()
        var generator = SplitMix64(seed: system.next())
        items = (max(count, 0) > 0 ? Array(1...count) : []).map { n in
            GalleryItem(
                name: Self.name(of: n),
                url: Self.url(of: n),
                price: Self.price(of: n),
                checksum: Self.randomUUID(using: &generator).uuidString
            )
        }
    }

    /// A random (version 4, RFC 9562) UUID from `generator`.
    static func randomUUID(using generator: inout SplitMix64) -> UUID {
        let high = generator.next()
        let low = generator.next()
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<8 {
            bytes[index] = UInt8(truncatingIfNeeded: high >> (8 * (7 - index)))
            bytes[8 + index] = UInt8(truncatingIfNeeded: low >> (8 * (7 - index)))
        }
        bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
        bytes[8] = bytes[8] & 0x3F | 0x80  // RFC variant
        return UUID(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
        ))
    }

    /// The feed's path: `/gallery/images`.
    static let feedPath = "/gallery/images"
    /// The images' path, before the `?N` query: `/gallery/image`.
    static let imagePath = "/gallery/image"

    /// The url of item N: `/gallery/image?N`, the bare number as the query (no `key=`).
    static func url(of n: Int) -> String { "\(imagePath)?\(n)" }

    /// The display name of item N, e.g. "Rocket 4".
    static func name(of n: Int) -> String {
        let index = ((n - 1) % titles.count + titles.count) % titles.count
        return "\(titles[index]) \(n)"
    }

    /// The price of item N: between 1.00 and 99.99 with two decimals, scrambled by a multiplier
    /// so neighbours differ.
    static func price(of n: Int) -> Double {
        let cents = 100 + (abs(n) &* 7919) % 9900
        return Double(cents) / 100
    }

    /// Whether N answers with the error JSON instead of a PNG: `N % 10 == 0` (the book's quirk)
    /// or N outside 1...count.
    static func isErrorItem(_ n: Int, count: Int) -> Bool {
        n % 10 == 0 || n < 1 || n > count
    }
}
