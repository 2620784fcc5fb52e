#if canImport(Glibc)
import Glibc
#endif

/// Reads a feed body in one pass, keeping only what the agent uses: each item's `url` and `checksum`.
///
/// The body must be a JSON array of objects, each with a string `name`, a string `url`, a number `price`
/// (finite as a `Double`) and a string `checksum`, as `FeedItem` declares them; other keys are allowed and
/// skipped. `name` and `price` are checked and dropped, never built. A url is looked up by its bytes among
/// the keys already met (`FeedKeyInterner`), so only a url seen for the first time becomes a `String`, and
/// only a key's first `checksum` does: memory grows with the distinct keys, not with the body.
///
/// Duplicate keys in one item: the first one counts and later ones are only checked as JSON, which is what
/// `JSONDecoder` does. The verdict is `JSONDecoder`'s on every body it reads strictly (pinned by the
/// fuzz-corpus tests and the fuzzer's differential check), and stricter where it is lax (`FeedScanner`).
struct FeedReader {
    /// The fields of an item the reader knows.
    private enum Field {
        case name, url, price, checksum, other
    }

    private var scanner: FeedScanner
    private var interner: FeedKeyInterner
    /// For each key of `interner`, its position in this feed (its index in `uniqueKeys`), or -1 before it appears.
    private var positionOfKey: [Int32]
    /// Each entry's position.
    private var entries: [Int32] = []
    private var uniqueKeys: [AssetKey] = []
    private var tags: [FeedTag?] = []
    private var rejections: [AssetKey.Rejection] = []
    /// Where each item read starts and which were refused: what `FeedDifference` reuses of this body.
    private var layout = FeedLayout()
    /// Decoded escapes of the current key or value; reused.
    private var scratch: [UInt8] = []

    /// `expectedBytes`: how much of `body` is expected to be read (all of it but for `readRun`).
    private init(_ body: UnsafeBufferPointer<UInt8>, known: [AssetKey], maximumUniqueAssets: Int, expectedBytes: Int? = nil) {
        scanner = FeedScanner(body)
        // Room for as many keys as the last feed had, or as a body this long holds (an item of the book's feed
        // is about 100 bytes, each listed three times), so the tables are not grown and rehashed as they fill.
        let bytes = expectedBytes ?? body.count
        let expected = max(known.count, min(bytes / 256, maximumUniqueAssets), expectedBytes == nil ? 1024 : 64)
        var interner = FeedKeyInterner(capacity: expected)
        for key in known {
            // The key keeps its url's hash, the interner's own (`AssetKey.hash(ofURL:)`): not hashed again.
            let hash = key.urlHash
            key.withURL { bytes in
                if interner.index(of: bytes, hash: hash) == nil { _ = interner.insert(key, bytes: bytes, hash: hash) }
            }
        }
        self.interner = interner
        positionOfKey = Array(repeating: -1, count: interner.keys.count)
        positionOfKey.reserveCapacity(expected)
        uniqueKeys.reserveCapacity(expected)
        tags.reserveCapacity(expected)
        entries.reserveCapacity(min(bytes / 80, 3 * maximumUniqueAssets))
        layout.itemStarts.reserveCapacity(min(bytes / 80, 3 * maximumUniqueAssets))
    }

    /// Reads `body`; urls among `known` are not checked again. Throws a `SyncError(.feed)` saying where and
    /// why a body is refused, or when it lists more than `maximumUniqueAssets` distinct keys.
    static func read(_ body: [UInt8], known: [AssetKey], maximumUniqueAssets: Int) throws(SyncError) -> GalleryFeed {
        try body.withUnsafeBufferPointer { buffer throws(SyncError) in
            try read(buffer, known: known, maximumUniqueAssets: maximumUniqueAssets)
        }
    }

    /// `read(_:known:maximumUniqueAssets:)` over bytes the caller holds; `readUpTo` is told, every few thousand
    /// items, that the bytes before an offset will not be read again (but for an error message).
    static func read(
        _ buffer: UnsafeBufferPointer<UInt8>, known: [AssetKey], maximumUniqueAssets: Int,
        readUpTo: ((Int) -> Void)? = nil
    ) throws(SyncError) -> GalleryFeed {
        try readWithLayout(buffer, known: known, maximumUniqueAssets: maximumUniqueAssets, readUpTo: readUpTo).feed
    }

    /// `read(_:known:maximumUniqueAssets:readUpTo:)`, and where each item starts in `buffer` (`FeedLayout`).
    static func readWithLayout(
        _ buffer: UnsafeBufferPointer<UInt8>, known: [AssetKey], maximumUniqueAssets: Int,
        readUpTo: ((Int) -> Void)? = nil
    ) throws(SyncError) -> (feed: GalleryFeed, layout: FeedLayout) {
        var reader = FeedReader(buffer, known: known, maximumUniqueAssets: maximumUniqueAssets)
        do throws(FeedSyntaxError) {
            let feed = try reader.readArray(maximumUniqueAssets: maximumUniqueAssets, readUpTo: readUpTo)
            return (feed, reader.layout)
        } catch {
            throw SyncError(.feed, error.message(in: buffer))
        }
    }

    /// The items of `buffer` from item number `item`, which starts at `offset`, up to the end of the array or to
    /// the first item start `resumeAt` accepts (an item of the last body that is known to read alike): for
    /// `FeedDifference`, which reads only what changed. The keys, tags and positions are the run's own (the
    /// first key met is position 0); the layout's offsets are `buffer`'s. Throws on any error: the caller then
    /// reads the whole body, whose error is the one to report.
    static func readRun(
        _ buffer: UnsafeBufferPointer<UInt8>, fromItem item: Int, at offset: Int, expectedBytes: Int = 0,
        maximumUniqueAssets: Int, resumeAt: (Int) -> Bool
    ) throws(FeedSyntaxError) -> (run: GalleryFeed, layout: FeedLayout, resumedAt: Int?) {
        var reader = FeedReader(buffer, known: [], maximumUniqueAssets: maximumUniqueAssets, expectedBytes: expectedBytes)
        reader.scanner.index = offset
        let resumedAt = try reader.readItems(fromItem: item, maximumUniqueAssets: maximumUniqueAssets, readUpTo: nil, resumeAt: resumeAt)
        if resumedAt == nil { try reader.readEnd() }
        let items: FeedState
        do {
            items = try FeedState(distinctKeys: reader.uniqueKeys, tags: reader.tags)
        } catch {
            preconditionFailure("the reader listed \(error.key) twice among a feed's distinct keys")
        }
        let run = GalleryFeed(entryPositions: reader.entries.compacted(), items: items, rejections: reader.rejections)
        return (run, reader.layout, resumedAt)
    }

    private mutating func readArray(
        maximumUniqueAssets: Int, readUpTo: ((Int) -> Void)?
    ) throws(FeedSyntaxError) -> GalleryFeed {
        scanner.skipByteOrderMark()
        if let encoding = Self.otherEncoding(scanner.bytes) {
            throw FeedSyntaxError("the body is not UTF-8 (it looks like \(encoding)); a feed must be UTF-8", at: 0)
        }
        scanner.skipWhitespace()
        guard scanner.peek == UInt8(ascii: "[") else {
            throw scanner.error("expected a JSON array, found \(scanner.foundDescription)")
        }
        scanner.index += 1
        scanner.skipWhitespace()
        if scanner.peek == UInt8(ascii: "]") {
            scanner.index += 1
        } else {
            _ = try readItems(fromItem: 0, maximumUniqueAssets: maximumUniqueAssets, readUpTo: readUpTo) { _ in false }
        }
        try readEnd()
        let items: FeedState
        do {
            items = try FeedState(distinctKeys: uniqueKeys, tags: tags)
        } catch {
            preconditionFailure("the reader listed \(error.key) twice among a feed's distinct keys")
        }
        return GalleryFeed(entryPositions: entries.compacted(), items: items, rejections: rejections)
    }

    /// Reads items, the scanner at the start of item number `item`, through the array's closing `]`; or up to the
    /// start of a later item that `resumeAt` accepts, whose offset it returns (the scanner there, the items before
    /// it read).
    private mutating func readItems(
        fromItem first: Int, maximumUniqueAssets: Int, readUpTo: ((Int) -> Void)?, resumeAt: (Int) -> Bool
    ) throws(FeedSyntaxError) -> Int? {
        var item = first
        while true {
            layout.itemStarts.append(Int32(scanner.index))
            try readItem(item)
            if uniqueKeys.count > maximumUniqueAssets {
                throw FeedSyntaxError("feed lists more than \(maximumUniqueAssets) unique assets; refusing it", at: nil)
            }
            item += 1
            if item & 4095 == 0 { readUpTo?(scanner.index) }
            scanner.skipWhitespace()
            if scanner.peek == UInt8(ascii: "]") {
                scanner.index += 1
                return nil
            }
            try scanner.separator(before: UInt8(ascii: "]"))
            if resumeAt(scanner.index) { return scanner.index }
        }
    }

    /// After the array's closing `]`: only whitespace to the end.
    private mutating func readEnd() throws(FeedSyntaxError) {
        scanner.skipWhitespace()
        guard scanner.isAtEnd else {
            throw scanner.error("found \(scanner.foundDescription) after the array; only whitespace may follow it")
        }
    }

    /// UTF-16 or UTF-32, guessed from a byte order mark or the NUL bytes around the first character.
    private static func otherEncoding(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard bytes.count >= 2 else { return nil }
        if (bytes[0] == 0xFF && bytes[1] == 0xFE) || (bytes[0] == 0xFE && bytes[1] == 0xFF) { return "UTF-16 or UTF-32" }
        if bytes[0] == 0 || bytes[1] == 0 { return "UTF-16 or UTF-32" }
        return nil
    }

    /// Reads item `item` (depth 2), the scanner at its first byte; adds its key or its url's rejection.
    private mutating func readItem(_ item: Int) throws(FeedSyntaxError) {
        var field: JSONStringSpan?
        do throws(FeedSyntaxError) {
            try readItemFields(item, field: &field)
        } catch {
            var located = error
            located.path = located.path ?? "[\(item)]" + (field.map(pathComponent) ?? "")
            throw located
        }
    }

    private mutating func readItemFields(_ item: Int, field key: inout JSONStringSpan?) throws(FeedSyntaxError) {
        guard scanner.peek == UInt8(ascii: "{") else {
            throw scanner.error("expected an object {name, url, price, checksum}, found \(scanner.foundDescription)")
        }
        scanner.index += 1
        scanner.skipWhitespace()
        var url: JSONStringSpan?, checksum: JSONStringSpan?
        var hasName = false, hasPrice = false
        if scanner.peek == UInt8(ascii: "}") {
            scanner.index += 1
        } else {
            while true {
                guard scanner.peek == UInt8(ascii: "\"") else {
                    throw scanner.error("expected a key string, found \(scanner.foundDescription)")
                }
                let name = try scanner.scanString()
                key = name
                scanner.skipWhitespace()
                try scanner.expect(UInt8(ascii: ":"), "':' after a key")
                scanner.skipWhitespace()
                switch self.field(named: name) {
                case .url where url == nil: url = try readString()
                case .checksum where checksum == nil: checksum = try readString()
                case .name where !hasName:
                    _ = try readString()
                    hasName = true
                case .price where !hasPrice:
                    try readPrice()
                    hasPrice = true
                default:
                    try scanner.skipValue(depth: 2)  // unknown, or a later duplicate: only checked
                }
                key = nil
                scanner.skipWhitespace()
                if scanner.peek == UInt8(ascii: "}") {
                    scanner.index += 1
                    break
                }
                try scanner.separator(before: UInt8(ascii: "}"))
            }
        }
        // Missing keys are named in FeedItem's order, as JSONDecoder names them.
        let missing = !hasName ? "name" : url == nil ? "url" : !hasPrice ? "price" : checksum == nil ? "checksum" : nil
        if let missing { throw FeedSyntaxError("no \"\(missing)\" key", at: scanner.index - 1) }
        if let url, let checksum { add(url: url, checksum: checksum) }
    }

    /// A string value (the scanner at its first byte), or an error naming what was there instead.
    private mutating func readString() throws(FeedSyntaxError) -> JSONStringSpan {
        guard scanner.peek == UInt8(ascii: "\"") else {
            throw scanner.error("expected a string, found \(scanner.foundDescription)")
        }
        return try scanner.scanString()
    }

    /// A price: a number that is a finite `Double`, not one that overflows to infinity or a non-zero one that
    /// underflows to zero (`JSONDecoder` refuses both).
    private mutating func readPrice() throws(FeedSyntaxError) {
        guard let first = scanner.peek, first == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            throw scanner.error("expected a number, found \(scanner.foundDescription)")
        }
        let (range, hasExponent) = try scanner.scanNumber()
        // Without an exponent, under 300 digits can neither overflow nor underflow a Double.
        guard hasExponent || range.count >= 300 else { return }
        let text = String(decoding: scanner.bytes[range], as: UTF8.self)
        let shown = text.utf8.count > 40 ? "\(text.prefix(40))..." : text
        let value = Double(text) ?? .nan
        let mantissaIsZero = scanner.bytes[range].prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }
            .allSatisfy { $0 == UInt8(ascii: "0") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
        guard value.isFinite, value != 0 || mantissaIsZero else {
            throw FeedSyntaxError("the number \(shown) is not representable as a Double", at: range.lowerBound)
        }
    }

    private mutating func field(named span: JSONStringSpan) -> Field {
        if span.hasEscapes {
            scanner.decode(span, into: &scratch)
            return scratch.withUnsafeBufferPointer(Self.field)
        }
        return Self.field(UnsafeBufferPointer(rebasing: scanner.bytes[span.start..<span.end]))
    }

    private static func field(_ name: UnsafeBufferPointer<UInt8>) -> Field {
        // Four keys of distinct lengths: the length picks the candidate, the bytes confirm it (at four keys an
        // item and 300,000 items, a generic comparison showed in the profile).
        func equals(_ candidate: StaticString) -> Bool {
            memcmp(name.baseAddress!, candidate.utf8Start, name.count) == 0
        }
        switch name.count {
        case 3 where equals("url"): return .url
        case 4 where equals("name"): return .name
        case 5 where equals("price"): return .price
        case 8 where equals("checksum"): return .checksum
        default: return .other
        }
    }

    /// Records one item: its key (found by the url's bytes, or made and checked), or the url's rejection.
    private mutating func add(url: JSONStringSpan, checksum: JSONStringSpan) {
        let index = withContent(of: url) { interner, bytes -> Result<Int, AssetKey.Rejection> in
            let hash = FeedKeyInterner.hash(bytes)
            if let index = interner.index(of: bytes, hash: hash) { return .success(index) }
            do throws(AssetKey.Rejection) {
                let key = try AssetKey(feedURLBytes: bytes)
                return .success(interner.insert(key, bytes: bytes, hash: hash))
            } catch {
                return .failure(error)
            }
        }
        switch index {
        case .failure(let rejection):
            rejections.append(rejection)
            layout.refusedItems.append(Int32(layout.itemStarts.count - 1))
        case .success(let index):
            if index >= positionOfKey.count { positionOfKey.append(-1) }
            var position = positionOfKey[index]
            if position < 0 {
                position = Int32(uniqueKeys.count)
                positionOfKey[index] = position
                let key = interner.keys[index]
                uniqueKeys.append(key)
                tags.append(withContent(of: checksum) { _, bytes in FeedTag(bytes) })
            }
            entries.append(position)
        }
    }

    /// Calls `body` with the interner and the content of `span`: the body's own bytes, or its escapes decoded.
    private mutating func withContent<R>(
        of span: JSONStringSpan, _ body: (inout FeedKeyInterner, UnsafeBufferPointer<UInt8>) -> R
    ) -> R {
        guard span.hasEscapes else {
            return body(&interner, UnsafeBufferPointer(rebasing: scanner.bytes[span.start..<span.end]))
        }
        scanner.decode(span, into: &scratch)
        return scratch.withUnsafeBufferPointer { body(&interner, $0) }
    }

    /// `.url`, or `["some key"]` for a key that is not a plain word, for an error's path.
    private func pathComponent(_ span: JSONStringSpan) -> String {
        var decoded: [UInt8] = []
        scanner.decode(span, into: &decoded)
        let name = String(decoding: decoded.prefix(40), as: UTF8.self)
        let plain = !name.isEmpty && name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "_"):
                true
            default: false
            }
        }
        return plain ? ".\(name)" : "[\(name.debugDescription)]"
    }
}
