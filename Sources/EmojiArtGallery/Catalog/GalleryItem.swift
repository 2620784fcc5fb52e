/// One entry of the gallery feed (`GET /gallery/images`), exactly as it goes on the wire.
///
/// JSON: `{"name": String, "url": String, "price": Double, "checksum": String}`. The feed lists
/// every item three times; equality compares all four fields, so the three copies are equal.
public struct GalleryItem: Codable, Sendable, Equatable, Hashable {
    /// Display title, deterministic per N (e.g. "Rocket 7").
    public var name: String
    /// Path and query of the image, e.g. `/gallery/image?7` (relative to the server's base URL).
    public var url: String
    /// Price, deterministic per N, with two decimals.
    public var price: Double
    /// A random UUID string made once per item per server lifetime: an opaque tag, not a hash
    /// of the image (a generation bump changes the bytes but not the checksum, as in the book).
    public var checksum: String

    /// Creates an item from its four wire fields.
    public init(name: String, url: String, price: Double, checksum: String) {
        self.name = name
        self.url = url
        self.price = price
        self.checksum = checksum
    }
}
