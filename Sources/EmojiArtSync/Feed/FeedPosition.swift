/// A key's position in a feed the catalogue kept (`FeedState`), and which one: the catalogue's version of it.
/// Per-key tables indexed by position are valid only for that version.
struct FeedPosition: Sendable, Equatable {
    let index: Int
    let version: UInt64

    init(_ index: Int, version: UInt64) {
        self.index = index
        self.version = version
    }
}
