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

    /// The file name for an accepted key's raw value.
    static func derive(from key: String) -> String {
        var key = key
        return key.withUTF8 { key in withDerivedName(of: key) { String(decoding: $0, as: UTF8.self) } }
    }

    /// The longest name: `asset-`, 48 readable bytes, `-`, 32 hex digits, `.png`.
    private static let maximumNameLength = 6 + 48 + 1 + 32 + 4

    /// Calls `body` with the file name of the accepted key whose UTF-8 bytes are `key`, written into a buffer on
    /// the stack: a feed of 100,000 keys of the hashed family derives 100,000 names when a run starts, and each
    /// goes straight into its key's one allocation (`AssetKey(feedURLBytes:)`).
    static func withDerivedName<R>(of key: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let bookShaped = hasBookShape(key)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bookShaped ? key.count + 3 : maximumNameLength) { name in
            var count = 0
            func put(_ byte: UInt8) {
                name[count] = byte
                count += 1
            }
            func put(_ text: StaticString) {
                for at in 0..<text.utf8CodeUnitCount { put(text.utf8Start[at]) }
            }
            if bookShaped {
                // `/SEG/SEG?SEG` → `SEG_SEG_SEG.png`: the book's mapping of a key whose segments are plain.
                for byte in key.dropFirst() { put(isAlphanumeric(byte) ? byte : UInt8(ascii: "_")) }
            } else {
                put("asset-")
                let readable = count
                forEachBookMappingByte(of: key, limit: 48, put)
                if count > readable { put("-") }
                let digits: StaticString = "0123456789abcdef"
                SHA256Digest.withDigest(of: UnsafeRawBufferPointer(key)) { digest in
                    for byte in digest.prefix(16) {
                        put(digits.utf8Start[Int(byte >> 4)])
                        put(digits.utf8Start[Int(byte & 0xF)])
                    }
                }
            }
            put(".png")
            return body(UnsafeBufferPointer(rebasing: name[..<count]))
        }
    }

    /// Calls `put` with the first `limit` bytes of the book's `fileName(for:)` of `key`: drop the first
    /// character, split at anything that is not a letter or digit, join the non-empty pieces with `_`. (A walk
    /// of the bytes: every byte of a multi-byte character is not a letter or digit, so this is the same split as
    /// one by characters.)
    private static func forEachBookMappingByte(
        of key: UnsafeBufferPointer<UInt8>, limit: Int, _ put: (UInt8) -> Void
    ) {
        var written = 0
        var separated = false
        for byte in key.dropFirst() {
            guard written < limit else { return }
            if isAlphanumeric(byte) {
                if separated && written > 0 {
                    put(UInt8(ascii: "_"))
                    written += 1
                    guard written < limit else { return }
                }
                separated = false
                put(byte)
                written += 1
            } else {
                separated = true
            }
        }
    }

    /// Whether `key` is `/SEG/SEG?SEG` with alphanumeric segments of bounded length: the keys whose book name is
    /// reversible, and so theirs.
    private static func hasBookShape(_ key: UnsafeBufferPointer<UInt8>) -> Bool {
        guard key.first == UInt8(ascii: "/") else { return false }
        var separatorsSeen = 0
        var segmentLength = 0
        for byte in key.dropFirst() {
            if isAlphanumeric(byte) {
                segmentLength += 1
                continue
            }
            let expected = separatorsSeen == 0 ? UInt8(ascii: "/") : UInt8(ascii: "?")
            guard separatorsSeen < 2, byte == expected, (1...maximumSegmentLength).contains(segmentLength) else {
                return false
            }
            separatorsSeen += 1
            segmentLength = 0
        }
        return separatorsSeen == 2 && (1...maximumSegmentLength).contains(segmentLength)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        default: return false
        }
    }
}
