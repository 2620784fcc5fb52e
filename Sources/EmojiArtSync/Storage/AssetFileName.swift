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
    public static let fileExtension = ".png"
    private static let maximumSegmentLength = 24

    /// The file name for `key` (worked out when the key was accepted).
    public static func name(for key: AssetKey) -> String {
        key.fileName
    }

    /// The file name for an accepted key's raw value.
    static func derive(from key: String) -> String {
        if let simple = bookName(for: key) {
            return simple + fileExtension
        }
        let hex = SHA256Digest.hex(of: Array(key.utf8))
        let readable = String(bookMapping(key).prefix(48))
        let stem = readable.isEmpty ? "asset-\(hex.prefix(32))" : "asset-\(readable)-\(hex.prefix(32))"
        return stem + fileExtension
    }

    /// The book's `fileName(for:)`: drop the first character, split at anything that is not a letter or digit,
    /// join the non-empty pieces with `_`.
    static func bookMapping(_ key: String) -> String {
        let scalars = key.unicodeScalars.dropFirst()
        var pieces: [String] = []
        var current = ""
        for scalar in scalars {
            if isAlphanumeric(scalar) {
                current.unicodeScalars.append(scalar)
            } else if !current.isEmpty {
                pieces.append(current)
                current = ""
            }
        }
        if !current.isEmpty { pieces.append(current) }
        return pieces.joined(separator: "_")
    }

    /// The book's name when `key` is `/SEG/SEG?SEG` (alphanumeric segments of bounded length), else nil.
    private static func bookName(for key: String) -> String? {
        let bytes = Array(key.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return nil }
        var segments: [[UInt8]] = [[]]
        var separators: [UInt8] = []
        for byte in bytes.dropFirst() {
            if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") {
                separators.append(byte)
                segments.append([])
            } else if isAlphanumeric(Unicode.Scalar(byte)) {
                segments[segments.count - 1].append(byte)
            } else {
                return nil
            }
        }
        guard separators == [UInt8(ascii: "/"), UInt8(ascii: "?")],
            segments.allSatisfy({ !$0.isEmpty && $0.count <= maximumSegmentLength })
        else { return nil }
        return segments.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "_")
    }

    private static func isAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        default: return false
        }
    }
}
