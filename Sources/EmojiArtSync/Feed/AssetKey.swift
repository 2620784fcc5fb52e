#if canImport(Glibc)
import Glibc
#endif

/// A feed URL the agent has accepted as an asset on the configured server: a path plus optional query,
/// such as `/gallery/image?3`. This is the key of the memory cache, the disk index and every log line.
///
/// The only way to get one is `init(feedURL:)`, which refuses anything that could make the agent request
/// another host or name a file outside its directory: absolute or scheme-relative URLs, paths not starting
/// with `/`, `..` segments (also percent-encoded), backslashes, fragments, whitespace, control characters,
/// NUL, non-ASCII, and keys longer than `maximumLength`.
///
/// One reference to one allocation (`AssetKeyStorage`): the url's bytes, the url's hash and what its file name
/// needs beyond the url, worked out once, when the key is accepted. A feed lists every key three times and the
/// memory cache, the index's answers and the pass all hold it, so a copy is one reference; a gallery of 100,000
/// keys holds 100,000 of them for as long as the agent runs. The file name is not stored when the url gives it
/// back (`AssetFileName.Form`): a book-shaped name is the url mapped, a hashed one the url mapped plus the 16 bytes
/// of its digest; `withFileName` writes it on the stack when asked (tens of nanoseconds), where a stored 63-byte
/// name made every key of the hashed family 48 bytes larger (docs/BENCHMARKS.md has the heap profile).
/// `rawValue` and `fileName` make a `String` when asked; the per-access paths read the bytes in place
/// (`withURL`, `withFileName`).
// `@unchecked` only because `ManagedBuffer`, which `AssetKeyStorage` is, can never be `Sendable`.
// SAFETY: a key's storage is written once, in `AssetKeyStorage.make`, before any key holds it; only read after.
public struct AssetKey: Hashable, @unchecked Sendable, Comparable, CustomStringConvertible {
    /// Longer keys are refused: no gallery needs them, and they bound log lines and file names.
    static let maximumLength = 1024

    private let storage: AssetKeyStorage

    /// The path and query, always starting with a single `/`.
    public var rawValue: String { withURL { String(decoding: $0, as: UTF8.self) } }

    /// The name of the key's file in the sync directory (`AssetFileName`), worked out once, when the key is
    /// accepted: every access logs it and looks its file up by it.
    var fileName: String { withFileName { String(decoding: $0, as: UTF8.self) } }

    /// Why a feed URL was refused.
    public struct Rejection: Error, Sendable, Equatable, CustomStringConvertible {
        public let url: String
        public let reason: String
        public var description: String { "feed url refused (\(reason))" }
    }

    /// Accepts `url` from the feed, or says why not. One pass over the bytes: a feed lists every key three
    /// times, and a large gallery has a hundred thousand of them.
    public init(feedURL url: String) throws(Rejection) {
        var url = url
        let made = url.withUTF8 { url in Result { () throws(Rejection) in try AssetKey(feedURLBytes: url) } }
        self = try made.get()
    }

    /// `init(feedURL:)` from the url's UTF-8 bytes, read in place (a feed's reader has them in its body): the
    /// url and its file name go straight into the key's allocation.
    init(feedURLBytes url: UnsafeBufferPointer<UInt8>) throws(Rejection) {
        try Self.validate(url)
        storage = AssetFileName.withForm(of: url) { form, kept in AssetKeyStorage.make(url: url, nameForm: form, kept: kept) }
    }

    /// A key read back from the agent's own index: checked like a feed url, with the file name its row records
    /// (derived when the file was written): its digest is read back from it rather than worked out again for
    /// every row of a large index, and a name no rule gives back is kept as it is.
    public init(indexedURL url: String, fileName: String) throws(Rejection) {
        var url = url, fileName = fileName
        try url.withUTF8 { url in Result { () throws(Rejection) in try Self.validate(url) } }.get()
        guard fileName.utf8.count <= Self.maximumLength else {
            throw Rejection(url: url, reason: "its recorded file name is longer than \(Self.maximumLength) bytes")
        }
        storage = url.withUTF8 { url in
            fileName.withUTF8 { name in
                AssetFileName.withForm(of: url, recordedName: name) { derived in
                    if let derived { return AssetKeyStorage.make(url: url, nameForm: derived.form, kept: derived.digest) }
                    return AssetKeyStorage.make(url: url, nameForm: .verbatim, kept: name)
                }
            }
        }
    }

    /// A key only to look `url` up by (`FeedState.member(_:)`): not checked, so never requested, logged or used
    /// as a file name itself (its name is empty); what a lookup finds is the feed's own, checked key. A walk of a
    /// large index probes the feed once per row, and checking every row's url first was a fair part of the walk.
    /// The url's bytes are read in place (a row of the index as SQLite hands it over).
    init(probing url: UnsafeBufferPointer<UInt8>) {
        storage = AssetKeyStorage.make(url: url, nameForm: .verbatim, kept: UnsafeBufferPointer(start: nil, count: 0))
    }

    /// Calls `body` with the url's bytes, in place.
    func withURL<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { header, bytes in
            try body(UnsafeBufferPointer(start: bytes, count: Int(header.pointee.urlCount)))
        }
    }

    /// Calls `body` with the file name's bytes, a NUL after them (`withFileNameCString`): in place when the name is
    /// stored, else written on the stack from the url (and the digest the key keeps).
    func withFileName<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { header, bytes in
            let url = UnsafeBufferPointer(start: bytes, count: Int(header.pointee.urlCount))
            let kept = UnsafeBufferPointer(start: bytes + url.count, count: Int(header.pointee.keptCount))
            switch header.pointee.nameForm {
            case .verbatim: return try body(kept)
            case let form: return try AssetFileName.withName(of: url, form: form, digest: kept, body)
            }
        }
    }

    /// How many bytes the key keeps for its file name beyond its url (0 for a book-shaped name, the digest's 16 for a
    /// hashed one, the name's own for one no rule gives back).
    var keptNameBytes: Int { storage.withUnsafeMutablePointerToHeader { Int($0.pointee.keptCount) } }

    /// Whether the url and the file name go into a logfmt line as they are, with no quotes (`AssetKeyHeader`).
    var logsAsIs: Bool { storage.withUnsafeMutablePointerToHeader { $0.pointee.logsAsIs } }

    /// Whether the key's file name is `name` (compared in place).
    func hasFileName(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { name in hasFileName(name) }
    }

    /// `hasFileName(_:)` for a name's UTF-8 bytes.
    func hasFileName(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        withFileName { Self.sameBytes($0, name) }
    }

    /// Calls `body` with the file name as a C string, in place: for a system call on the file relative to DIR's
    /// descriptor, with no `String` made.
    func withFileNameCString<Result>(_ body: (UnsafePointer<CChar>) throws -> Result) rethrows -> Result {
        try withFileName { name in
            // Never nil: the bytes are in the key's allocation or on the stack, a NUL after them either way.
            try UnsafeRawPointer(name.baseAddress!).withMemoryRebound(to: CChar.self, capacity: name.count + 1) { try body($0) }
        }
    }

    /// Checks a url's UTF-8 bytes; a rejection carries the url as text.
    private static func validate(_ bytes: UnsafeBufferPointer<UInt8>) throws(Rejection) {
        func reject(_ reason: String) -> Rejection { Rejection(url: String(decoding: bytes, as: UTF8.self), reason: reason) }
        guard !bytes.isEmpty else { throw reject("empty") }
        guard bytes.count <= Self.maximumLength else { throw reject("longer than \(Self.maximumLength) bytes") }
        let slash = UInt8(ascii: "/"), dot = UInt8(ascii: "."), question = UInt8(ascii: "?")
        var window: (UInt8, UInt8, UInt8) = (0, 0, 0)  // the last three bytes, lower-cased
        var percentEncoded = false, dotSegment = false, doubleDot = false
        var inQuery = false
        var segment = (length: 0, dots: 0)
        for byte in bytes {
            if byte < 0x21 || byte > 0x7E { throw reject("whitespace, control or non-ASCII character") }
            if byte == UInt8(ascii: "\\") { throw reject("backslash") }
            if byte == UInt8(ascii: "#") { throw reject("fragment") }
            window = (window.1, window.2, byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte)
            if window.0 == UInt8(ascii: "%"),
                [(0x32, 0x65), (0x32, 0x66), (0x35, 0x63), (0x30, 0x30)].contains(where: { $0 == (window.1, window.2) })
            {
                percentEncoded = true  // %2e %2f %5c %00
            }
            if window.1 == dot && window.2 == dot { doubleDot = true }
            if !inQuery {
                if byte == slash || byte == question {
                    dotSegment = dotSegment || Self.isDotSegment(segment)
                    segment = (0, 0)
                    inQuery = byte == question
                } else {
                    segment.length += 1
                    if byte == dot { segment.dots += 1 }
                }
            }
        }
        if !inQuery { dotSegment = dotSegment || Self.isDotSegment(segment) }
        guard bytes.first == slash else {
            let absolute = bytes.indices.dropLast(2).contains { at in
                bytes[at] == UInt8(ascii: ":") && bytes[at + 1] == slash && bytes[at + 2] == slash
            }
            throw reject(absolute ? "absolute URL: only paths on the configured server are fetched" : "does not start with /")
        }
        guard bytes.count < 2 || bytes[1] != slash else { throw reject("scheme-relative URL names another host") }
        if percentEncoded { throw reject("percent-encoded dot, slash, backslash or NUL") }
        if dotSegment { throw reject("dot segment in path") }
        if doubleDot { throw reject("contains ..") }
    }

    /// `.` or `..` as a whole path segment.
    private static func isDotSegment(_ segment: (length: Int, dots: Int)) -> Bool {
        (segment.length == 1 || segment.length == 2) && segment.dots == segment.length
    }

    public static func == (lhs: AssetKey, rhs: AssetKey) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.urlHash == rhs.urlHash && lhs.withURL { left in rhs.withURL { right in sameBytes(left, right) } })
    }

    /// Byte-equal, with `memcmp` (a generic `elementsEqual` walks element by element).
    private static func sameBytes(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        left.count == right.count && (left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(urlHash) }

    /// The url's hash in this process, kept in the storage: what `hash(into:)` combines and where a `KeyIndexTable`
    /// starts probing. Read through the header's pointer, not `ManagedBuffer.header`: that is a class's `var`, and
    /// each read of it is an exclusivity check (two `swift_beginAccess` calls per dictionary probe, 3 % of a warm
    /// pass).
    /// The hash a key whose url is `bytes` keeps (`urlHash`).
    static func hash(ofURL bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        return hasher.finalize()
    }

    /// Whether the key's url is `bytes`.
    func hasURL(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        withURL { Self.sameBytes($0, bytes) }
    }

    var urlHash: Int { storage.withUnsafeMutablePointerToHeader { $0.pointee.urlHash } }

    public var description: String { rawValue }

    /// By the url's bytes: the order of the urls as strings, since a key is ASCII. Compared with `memcmp`, which a
    /// pass's sorts of 100,000 keys feel (docs/BENCHMARKS.md).
    public static func < (lhs: AssetKey, rhs: AssetKey) -> Bool {
        lhs.withURL { left in
            rhs.withURL { right in
                let common = min(left.count, right.count)
                let order = common == 0 ? 0 : memcmp(left.baseAddress!, right.baseAddress!, common)
                return order != 0 ? order < 0 : left.count < right.count
            }
        }
    }
}

/// What an `AssetKeyStorage` holds besides its bytes.
struct AssetKeyHeader {
    /// The url's hash in this process, for `hash(into:)` and a cheap first test in `==`.
    let urlHash: Int
    let urlCount: Int32
    /// Bytes kept after the url: none (a book-shaped name), the digest's 16 (a hashed one), or the name's own.
    let keptCount: Int16
    let nameForm: AssetFileName.Form
    /// Neither the url nor the file name needs quotes as a logfmt value (`LogfmtFormatter.needsQuotes`): decided
    /// once, when the key is made, not at each of the access lines that write them (5 % of a SIGHUP pass, which
    /// writes one line per listing). The header's one spare byte.
    let logsAsIs: Bool
}

/// An `AssetKey`'s one allocation: the header, then the url's bytes, what its file name needs beyond the url
/// (`AssetKeyHeader.nameForm`) and a NUL. Written once, in `make`; read only after.
final class AssetKeyStorage: ManagedBuffer<AssetKeyHeader, UInt8> {
    /// The storage of a key: the url's UTF-8 bytes and, after them, `kept` (a digest or a name), copied in.
    static func make(url urlBytes: UnsafeBufferPointer<UInt8>, nameForm: AssetFileName.Form, kept: UnsafeBufferPointer<UInt8>) -> AssetKeyStorage {
        let hash = AssetKey.hash(ofURL: urlBytes)
        // A derived name is `[A-Za-z0-9_-]` and `.png` (`AssetFileName`): only a name kept as recorded is looked at.
        let logsAsIs = !LogfmtFormatter.needsQuotes(urlBytes) && (nameForm != .verbatim || !LogfmtFormatter.needsQuotes(kept))
        let header = AssetKeyHeader(
            urlHash: hash, urlCount: Int32(urlBytes.count), keptCount: Int16(kept.count), nameForm: nameForm,
            logsAsIs: logsAsIs)
        let buffer = create(minimumCapacity: urlBytes.count + kept.count + 1) { _ in header }
        let storage = unsafeDowncast(buffer, to: AssetKeyStorage.self)
        storage.withUnsafeMutablePointerToElements { bytes in
            if let base = urlBytes.baseAddress { bytes.update(from: base, count: urlBytes.count) }
            if let base = kept.baseAddress { (bytes + urlBytes.count).update(from: base, count: kept.count) }
            bytes[urlBytes.count + kept.count] = 0
        }
        return storage
    }
}

extension AssetKey {
    /// A key with its hash beside it: the key of the small dictionaries that most probes miss (the failures the
    /// memory layer remembers, the failures the log has written). A dictionary compares its probe with every key in
    /// the probe's run of buckets, and comparing two `AssetKey`s reads both storages; comparing these compares the
    /// hashes first, in the bucket, so a miss reads no other key (each stored file of a warm pass over a gallery
    /// with 10,000 failing items made two such misses: 3 % of the pass).
    struct WithHash: Hashable, Sendable {
        let key: AssetKey
        private let hash: Int

        init(_ key: AssetKey) {
            self.key = key
            hash = key.urlHash
        }

        static func == (lhs: WithHash, rhs: WithHash) -> Bool { lhs.hash == rhs.hash && lhs.key == rhs.key }

        func hash(into hasher: inout Hasher) { hasher.combine(hash) }
    }
}
