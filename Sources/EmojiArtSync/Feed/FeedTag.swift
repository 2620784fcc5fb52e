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
        guard bytes.count == 36, let base = bytes.baseAddress,
            base[8] == UInt8(ascii: "-"), base[13] == UInt8(ascii: "-"), base[18] == UInt8(ascii: "-"),
            base[23] == UInt8(ascii: "-")
        else { return nil }
        // Each digit's value from a table (0xFF: not a hex digit), and which letter cases were seen: one pass of
        // loads and ORs, no branch per byte (100,000 tags a decode at 100,000 keys).
        var high: UInt64 = 0, low: UInt64 = 0
        var invalid: UInt8 = 0, cases: UInt8 = 0
        for offset in 0..<36 where offset != 8 && offset != 13 && offset != 18 && offset != 23 {
            let entry = hexDigits[Int(base[offset])]
            invalid |= entry.value
            cases |= entry.letterCase
            if offset < 19 { high = high << 4 | UInt64(entry.value & 0xF) } else { low = low << 4 | UInt64(entry.value & 0xF) }
        }
        guard invalid & 0xF0 == 0, cases != 3 else { return nil }
        return .uuid(high: high, low: low, lowercase: cases == 2)
    }

    /// For each byte: its value as a hex digit (0xFF when it is none) and its case (1: a capital A-F, 2: a small
    /// a-f, 0: a digit or no letter).
    private static let hexDigits: [(value: UInt8, letterCase: UInt8)] = (0...255).map { byte -> (value: UInt8, letterCase: UInt8) in
        switch UInt8(byte) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): (UInt8(byte) - UInt8(ascii: "0"), 0)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): (UInt8(byte) - UInt8(ascii: "A") + 10, 1)
        case UInt8(ascii: "a")...UInt8(ascii: "f"): (UInt8(byte) - UInt8(ascii: "a") + 10, 2)
        default: (0xFF, 0)
        }
    }
}
