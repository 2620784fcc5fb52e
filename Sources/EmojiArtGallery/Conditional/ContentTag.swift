/// Entity tags for the gallery's answers: a 64-bit FNV-1a digest of the bytes that define a
/// representation, in hex.
///
/// Not a cryptographic hash: a tag only has to change when the content changes, and FNV-1a over
/// a 50 KB image costs microseconds. Tags are built by feeding the relevant parts in order.
struct ContentTag {
    private var state: UInt64 = 0xcbf2_9ce4_8422_2325

    init() {}

    /// Feeds `bytes`; contiguous ones (an array, a string's UTF-8) through one tight loop over their storage,
    /// which matters for the 64 MiB feeds of the oversized-feed fault.
    mutating func add(_ bytes: some Sequence<UInt8>) {
        let contiguous: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            var state = self.state
            for byte in buffer {
                state = (state ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            }
            self.state = state
        }
        guard contiguous == nil else { return }
        for byte in bytes {
            state = (state ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
    }

    /// Feeds the UTF-8 of `text` and a separator, so ("ab", "c") and ("a", "bc") differ.
    mutating func add(_ text: String) {
        add(text.utf8)
        add(CollectionOfOne(0))
    }

    /// The digest so far, 16 hex digits.
    var hex: String {
        let digits = String(state, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The tag of `bytes` alone.
    static func of(_ bytes: [UInt8]) -> String {
        var tag = ContentTag()
        tag.add(bytes)
        return tag.hex
    }
}
