#if canImport(Glibc)
import Glibc
#endif

/// The texts of the failures the memory layer remembers, each kept once however many keys failed with it.
///
/// A gallery's error items fail alike: "URL did not answer with a valid PNG: not a PNG: the data starts ...",
/// the same words around each item's url. A text is kept as what comes before the key's url in it and what comes
/// after (`Parts`), each interned here with a count of its users, so 10,000 failing items hold two strings
/// between them instead of a string and an error box each. Those two small allocations per item, made on the
/// pool's threads in the middle of a pass's short-lived ones and kept for the hour an error item waits, held
/// thousands of otherwise free pages that `malloc_trim` could not give back (docs/BENCHMARKS.md, seventeenth
/// session).
struct FailureTextTable {
    /// A failure's text: `before`, the key's url (when the text held it), then `after`; indices into the table.
    struct Parts: Equatable {
        let before: Int32
        /// -1: the text did not hold the key's url, and `before` is all of it.
        let after: Int32
    }

    private var indexOfText: [String: Int32] = [:]
    private var texts: [String] = []
    private var users: [Int32] = []
    /// Indices whose text has no user left, to be given to the next new text.
    private var unused: [Int32] = []

    /// Texts kept (for tests: they go when their last user does).
    var count: Int { indexOfText.count }

    /// Keeps `text`, the failure of `key`: split around the first occurrence of the key's url in it. The words
    /// kept last are tried first, byte for byte (a gallery's error items fail one after another with the same
    /// words): no string is made or hashed for them.
    mutating func keep(_ text: String, of key: AssetKey) -> Parts {
        var text = text
        let hints = last
        let parts = text.withUTF8 { bytes in
            guard let start = key.withURL({ Self.offset(of: $0, in: bytes) }) else {
                return Parts(before: intern(bytes, tryingFirst: hints.before), after: -1)
            }
            let end = start + key.withURL(\.count)
            return Parts(
                before: intern(UnsafeBufferPointer(rebasing: bytes[..<start]), tryingFirst: hints.before),
                after: intern(UnsafeBufferPointer(rebasing: bytes[end...]), tryingFirst: hints.after))
        }
        last = parts
        return parts
    }

    /// What `parts` holds: the text before the url, and the text after it (nil: the url was not in the text, and
    /// `before` is all of it). The strings are the table's own (no copy).
    func strings(_ parts: Parts) -> (before: String, after: String?) {
        (texts[Int(parts.before)], parts.after < 0 ? nil : texts[Int(parts.after)])
    }

    /// `parts` has one user fewer: a text with none left is dropped.
    mutating func release(_ parts: Parts) {
        release(parts.before)
        if parts.after >= 0 { release(parts.after) }
    }

    mutating func removeAll() {
        self = FailureTextTable()
    }

    /// The parts kept last: the first ones `keep` compares a new text's with.
    private var last = Parts(before: -1, after: -1)

    /// Where `needle` first starts in `haystack`, if it does (a failure's text is a few hundred bytes).
    private static func offset(of needle: UnsafeBufferPointer<UInt8>, in haystack: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = haystack.baseAddress, let pattern = needle.baseAddress, !needle.isEmpty,
            needle.count <= haystack.count
        else { return nil }
        for start in 0...(haystack.count - needle.count)
        where base[start] == pattern[0] && memcmp(base + start, pattern, needle.count) == 0 {
            return start
        }
        return nil
    }

    /// The index of `bytes` as a text: `hint`'s if that text is the same bytes, else found or added.
    private mutating func intern(_ bytes: UnsafeBufferPointer<UInt8>, tryingFirst hint: Int32) -> Int32 {
        if hint >= 0, users[Int(hint)] > 0 {
            var kept = texts[Int(hint)]
            let same = kept.withUTF8 { $0.count == bytes.count && ($0.isEmpty || memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0) }
            if same {
                users[Int(hint)] += 1
                return hint
            }
        }
        return intern(String(decoding: bytes, as: UTF8.self))
    }

    private mutating func intern(_ text: String) -> Int32 {
        if let index = indexOfText[text] {
            users[Int(index)] += 1
            return index
        }
        let index: Int32
        if let reused = unused.popLast() {
            index = reused
            texts[Int(index)] = text
            users[Int(index)] = 1
        } else {
            index = Int32(texts.count)
            texts.append(text)
            users.append(1)
        }
        indexOfText[text] = index
        return index
    }

    private mutating func release(_ index: Int32) {
        users[Int(index)] -= 1
        guard users[Int(index)] == 0 else { return }
        indexOfText[texts[Int(index)]] = nil
        texts[Int(index)] = ""
        unused.append(index)
    }
}
