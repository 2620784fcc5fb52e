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

    /// How a key's file name is kept beside its url (`AssetKeyStorage`): a name the url gives back is not stored.
    enum Form: UInt8 {
        /// The url has the book's shape: the name is the url's bytes mapped (`SEG_SEG_SEG.png`), nothing stored.
        case book
        /// The hashed family: the 16 bytes of the SHA-256 prefix are stored; the readable part comes from the url.
        case hashed
        /// The name's bytes are stored as they are (a name an index row records that no rule gives back).
        case verbatim
    }

    /// Bytes of a hashed name's digest (32 hex digits).
    static let digestCount = 16

    /// Calls `body` with the file name of the accepted key whose UTF-8 bytes are `key`, written into a buffer on
    /// the stack: a feed of 100,000 keys of the hashed family derives 100,000 names when a run starts.
    static func withDerivedName<R>(of key: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        withForm(of: key) { form, digest in withName(of: key, form: form, digest: digest, body) }
    }

    /// Calls `body` with the form of `key`'s name and what a key keeps for it: the digest's 16 bytes for a hashed
    /// name, nothing for a book-shaped one (`AssetKey(feedURLBytes:)` copies them into the key's allocation).
    static func withForm<R>(of key: UnsafeBufferPointer<UInt8>, _ body: (Form, UnsafeBufferPointer<UInt8>) -> R) -> R {
        if hasBookShape(key) { return body(.book, UnsafeBufferPointer(start: nil, count: 0)) }
        return SHA256Digest.withDigest(of: UnsafeRawBufferPointer(key)) { digest in
            // The digest was written into bytes (`withDigest`'s buffer is `UInt8`s).
            body(.hashed, UnsafeBufferPointer(start: digest.baseAddress?.assumingMemoryBound(to: UInt8.self), count: digestCount))
        }
    }

    private static let pngExtension: StaticString = ".png"

    /// Calls `body` with the name of the key whose url is `key`, in `form`, with the digest a hashed name keeps:
    /// written into a buffer on the stack, with a NUL after it (for a system call). A book-shaped one:
    /// `/SEG/SEG?SEG` → `SEG_SEG_SEG.png`, the book's mapping of a key whose segments are plain.
    static func withName<R>(
        of key: UnsafeBufferPointer<UInt8>, form: Form, digest: UnsafeBufferPointer<UInt8>,
        _ body: (UnsafeBufferPointer<UInt8>) throws -> R
    ) rethrows -> R {
        if form == .book {
            // Written through the pointers: every access line and every rescan's `fstatat` names a file, 300,000
            // names in a pass over a book-shaped gallery of 100,000 keys.
            return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: key.count + 4) { name in
                let output = name.baseAddress!, url = key.baseAddress!
                for index in 1..<key.count {
                    let byte = url[index]
                    output[index - 1] = isAlphanumeric(byte) ? byte : UInt8(ascii: "_")
                }
                let count = key.count - 1 + 4
                (output + count - 4).update(from: Self.pngExtension.utf8Start, count: 4)
                output[count] = 0
                return try body(UnsafeBufferPointer(start: output, count: count))
            }
        }
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maximumNameLength + 1) { name in
            var count = 0
            func put(_ byte: UInt8) {
                name[count] = byte
                count += 1
            }
            func put(_ text: StaticString) {
                for at in 0..<text.utf8CodeUnitCount { put(text.utf8Start[at]) }
            }
            switch form {
            case .book:
                preconditionFailure("written above")
            case .verbatim:
                preconditionFailure("a name no rule gives back is stored, never derived")
            case .hashed:
                put("asset-")
                let readable = count
                forEachBookMappingByte(of: key, limit: 48, put)
                if count > readable { put("-") }
                let digits: StaticString = "0123456789abcdef"
                for byte in digest {
                    put(digits.utf8Start[Int(byte >> 4)])
                    put(digits.utf8Start[Int(byte & 0xF)])
                }
            }
            put(".png")
            name[count] = 0
            return try body(UnsafeBufferPointer(rebasing: name[..<count]))
        }
    }

    /// The form and digest that give back `name` for the url `key`, if a rule does: what a key read back from the
    /// index keeps of the name its row records. Calls `body` with nil when no rule gives the name back.
    static func withForm<R>(
        of key: UnsafeBufferPointer<UInt8>, recordedName name: UnsafeBufferPointer<UInt8>,
        _ body: ((form: Form, digest: UnsafeBufferPointer<UInt8>)?) -> R
    ) -> R {
        if hasBookShape(key) {
            let same = withName(of: key, form: .book, digest: UnsafeBufferPointer(start: nil, count: 0)) { $0.elementsEqual(name) }
            return body(same ? (.book, UnsafeBufferPointer(start: nil, count: 0)) : nil)
        }
        // `asset-...-<32 hex>.png`: the hex digits before `.png`, read back into bytes, must give the name again.
        let hexCount = 2 * digestCount
        guard name.count >= hexCount + 4 else { return body(nil) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: digestCount) { digest in
            let hexStart = name.count - 4 - hexCount
            for at in 0..<digestCount {
                guard let high = hexValue(name[hexStart + 2 * at]), let low = hexValue(name[hexStart + 2 * at + 1]) else {
                    return body(nil)
                }
                digest[at] = high << 4 | low
            }
            let kept = UnsafeBufferPointer(digest)
            let same = withName(of: key, form: .hashed, digest: kept) { $0.elementsEqual(name) }
            return body(same ? (.hashed, kept) : nil)
        }
    }

    /// A lower-case hex digit's value (the names' digits are lower case).
    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
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
