/// Maps an asset key to the name of its file in the sync directory. A pure function of the key.
///
/// The book's mapping (drop the leading `/`, split at punctuation, join with `_`, here plus `.png`) turns
/// `/gallery/image?3` into `gallery_image_3.png`, which is what people expect to see. On its own it is not
/// injective (`/a/b?c`, `/a_b/c`, `/a?b/c` all collapse), so it is used only for keys of the exact shape
/// `/SEG/SEG?SEG` with ASCII letters and digits in each segment, where it is reversible. Every other key gets
///
///     asset-<up to 48 chars of the book mapping>-<first 32 hex digits of SHA-256(key)>.png
///
/// Book names never contain `-` and hashed names always do, so the two families cannot collide, and within the
/// hashed family a collision needs a 128-bit SHA-256 prefix collision. Every name is at most 100 bytes, made of
/// `[A-Za-z0-9_-]` plus `.png`: no `/`, no `..`, no NUL, never hidden, never the state directory.
public enum AssetFileName {
    static let fileExtension = ".png"
    private static let maximumSegmentLength = 24

    /// The file name for `key` (worked out when the key was accepted).
    public static func name(for key: AssetKey) -> String {
        key.fileName
    }

    /// The file name for an accepted key's raw value. Built as bytes in one buffer: a feed of 100,000 keys of
    /// the hashed family derives 100,000 names when a run starts.
    static func derive(from key: String) -> String {
        if let simple = bookName(for: key) {
            return simple + fileExtension
        }
        var name: [UInt8] = Array("asset-".utf8)
        name.reserveCapacity(6 + 48 + 1 + 32 + fileExtension.utf8.count)
        let readableStart = name.count
        appendBookMapping(of: key, to: &name, limit: 48)
        if name.count > readableStart { name.append(UInt8(ascii: "-")) }
        let digits: StaticString = "0123456789abcdef"
        for byte in SHA256Digest.bytes(of: Array(key.utf8)).prefix(16) {
            name.append(digits.utf8Start[Int(byte >> 4)])
            name.append(digits.utf8Start[Int(byte & 0xF)])
        }
        name.append(contentsOf: fileExtension.utf8)
        return String(decoding: name, as: UTF8.self)
    }

    /// The book's `fileName(for:)`: drop the first character, split at anything that is not a letter or digit,
    /// join the non-empty pieces with `_`. (A walk of the bytes: every byte of a multi-byte character is not a
    /// letter or digit, so this is the same split as one by characters.)
    static func bookMapping(_ key: String) -> String {
        var name: [UInt8] = []
        appendBookMapping(of: key, to: &name, limit: key.utf8.count)
        return String(decoding: name, as: UTF8.self)
    }

    /// Appends the first `limit` bytes of `key`'s book mapping to `name`.
    private static func appendBookMapping(of key: String, to name: inout [UInt8], limit: Int) {
        let start = name.count
        var separated = false
        for byte in key.utf8.dropFirst() {
            guard name.count - start < limit else { return }
            if isAlphanumeric(byte) {
                if separated && name.count > start {
                    name.append(UInt8(ascii: "_"))
                    guard name.count - start < limit else { return }
                }
                separated = false
                name.append(byte)
            } else {
                separated = true
            }
        }
    }

    /// The book's name when `key` is `/SEG/SEG?SEG` (alphanumeric segments of bounded length), else nil.
    private static func bookName(for key: String) -> String? {
        let separators = [UInt8(ascii: "/"), UInt8(ascii: "?")]
        guard key.utf8.first == UInt8(ascii: "/") else { return nil }
        var name: [UInt8] = []
        name.reserveCapacity(key.utf8.count)
        var separatorsSeen = 0
        var segmentLength = 0
        for byte in key.utf8.dropFirst() {
            if isAlphanumeric(byte) {
                name.append(byte)
                segmentLength += 1
            } else if separatorsSeen < separators.count, byte == separators[separatorsSeen],
                (1...maximumSegmentLength).contains(segmentLength)
            {
                name.append(UInt8(ascii: "_"))
                separatorsSeen += 1
                segmentLength = 0
            } else {
                return nil
            }
        }
        guard separatorsSeen == separators.count, (1...maximumSegmentLength).contains(segmentLength) else { return nil }
        return String(decoding: name, as: UTF8.self)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        default: return false
        }
    }
}
