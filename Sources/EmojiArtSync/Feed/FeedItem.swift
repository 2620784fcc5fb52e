/// One entry of the gallery feed (`GET /gallery/images`), as the server sends it.
///
/// `checksum` is an opaque tag the server makes up once per process; it is not a content hash, so the
/// agent never uses it to judge bytes. `url` is untrusted until `AssetKey` has accepted it.
struct FeedItem: Decodable, Sendable, Equatable {
    let name: String
    let url: String
    let price: Double
    let checksum: String

    init(name: String, url: String, price: Double, checksum: String) {
        self.name = name
        self.url = url
        self.price = price
        self.checksum = checksum
    }
}
