/// A feed item's `checksum` as the agent keeps it: an opaque tag whose change means the item changed.
///
/// Galleries send a UUID (the book's server makes `UUID().uuidString`s): such a tag is kept as its 16 bytes,
/// not as a 36-character `String` on the heap, which at 100,000 keys is about 6 MiB and 100,000 allocations
/// less. Any other text is kept as it is. The text is given back exactly as the feed sent it (the index
/// records it, the log shows it): a UUID in mixed case is kept as text, since its bytes could not say which
/// letters were capitals.
struct FeedTag: Hashable, Sendable, CustomStringConvertible {
    /// How the tag is kept: what a feed snapshot writes and reads back (`FeedSnapshot`), without the text.
    enum Storage: Hashable, Sendable {
        case uuid(high: UInt64, low: UInt64, lowercase: Bool)
        case text(String)
    }

    let storage: Storage

    /// The tag kept as `storage` (a feed snapshot's).
    init(storage: Storage) {
        self.storage = storage
    }

    /// The tag the feed spelt as `bytes` (its `checksum` string, escapes decoded).
    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        storage = Self.uuid(bytes) ?? .text(String(decoding: bytes, as: UTF8.self))
    }

    /// The tag spelt as `text` (a tag the index recorded).
    init(_ text: String) {
        var text = text
        storage = text.withUTF8 { Self.uuid($0) } ?? .text(text)
    }

    /// The tag as the feed spelt it.
    var description: String {
        switch storage {
        case .text(let text):
            return text
        case .uuid(let high, let low, let lowercase):
            let digits: StaticString = lowercase ? "0123456789abcdef" : "0123456789ABCDEF"
            return String(unsafeUninitializedCapacity: 36) { buffer in
                var out = 0
                for nibble in 0..<32 {
                    if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 {
                        buffer[out] = UInt8(ascii: "-")
                        out += 1
                    }
                    let word = nibble < 16 ? high : low
                    let value = Int((word >> UInt64(60 - 4 * (nibble % 16))) & 0xF)
                    buffer[out] = digits.utf8Start[value]
                    out += 1
                }
                return out
            }
        }
    }

    /// `bytes` as a UUID in the 8-4-4-4-12 form, all its letters capitals or all small, else nil.
    private static func uuid(_ bytes: UnsafeBufferPointer<UInt8>) -> Storage? {
        guard bytes.count == 36 else { return nil }
        var high: UInt64 = 0, low: UInt64 = 0
        var nibbles = 0
        var capitals = false, smalls = false
        for (offset, byte) in bytes.enumerated() {
            if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            let value: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = byte - UInt8(ascii: "A") + 10; capitals = true
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = byte - UInt8(ascii: "a") + 10; smalls = true
            default: return nil
            }
            if nibbles < 16 { high = high << 4 | UInt64(value) } else { low = low << 4 | UInt64(value) }
            nibbles += 1
        }
        guard !(capitals && smalls) else { return nil }
        return .uuid(high: high, low: low, lowercase: smalls)
    }
}
