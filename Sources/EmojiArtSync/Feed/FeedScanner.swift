/// The bytes of one JSON string value in the body: where its content starts and ends (the quotes excluded),
/// and whether it holds escapes (when not, the content is its own UTF-8, usable without a copy).
struct JSONStringSpan: Sendable {
    var start: Int
    var end: Int
    var hasEscapes: Bool

    var count: Int { end - start }
}

/// A single-pass, validating JSON tokenizer over a feed body (RFC 8259), for `FeedReader`.
///
/// It reads in place and allocates nothing for what it validates: strings come back as spans of the body,
/// values the agent does not use are checked and skipped, never built. Strict where `JSONDecoder` is lax on
/// values it skips: every string is valid UTF-8 (shortest form, no surrogates) with valid escapes and paired
/// `\u` surrogates and no raw control characters; every number follows the grammar (no `01`, `1.`, `-`, `+1`);
/// no trailing comma; only space, tab, CR and LF between tokens. Containers nest at most `maximumDepth`
/// deep, `JSONDecoder`'s limit, and nesting is skipped with a counter and a small stack, never by recursion.
struct FeedScanner {
    /// Nesting deeper than this is refused: the top-level array is depth 1, an item 2. `JSONDecoder` refuses
    /// the 513th level too, so a feed is refused at the same depth as before.
    static let maximumDepth = 512

    let bytes: UnsafeBufferPointer<UInt8>
    /// The next byte to read.
    var index = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { index >= bytes.count }

    /// The next byte, or nil at the end of the body.
    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// Skips a UTF-8 byte order mark at the very start (allowed by RFC 8259 §8.1 to be ignored).
    mutating func skipByteOrderMark() {
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { index = 3 }
    }

    /// Consumes `byte`, or throws "expected `what`, found ...".
    mutating func expect(_ byte: UInt8, _ what: String) throws(FeedSyntaxError) {
        guard peek == byte else { throw error("expected \(what), found \(foundDescription)") }
        index += 1
    }

    func error(_ reason: String, at offset: Int? = nil) -> FeedSyntaxError {
        FeedSyntaxError(reason, at: offset ?? index)
    }

    /// What the next byte starts, in words: `a string`, `an object`, `the end of the body`, `byte 0xFF`.
    var foundDescription: String {
        guard let byte = peek else { return "the end of the body" }
        switch byte {
        case UInt8(ascii: "\""): return "a string"
        case UInt8(ascii: "{"): return "an object"
        case UInt8(ascii: "["): return "an array"
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return "a number"
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return "a boolean"
        case UInt8(ascii: "n"): return "null"
        case 0x21...0x7E: return "'\(Character(Unicode.Scalar(byte)))'"
        default:
            return "byte 0x\(String(byte, radix: 16, uppercase: true))"
        }
    }

    // MARK: - Strings

    /// Reads a string starting at its opening quote: validates it and returns its content's span.
    mutating func scanString() throws(FeedSyntaxError) -> JSONStringSpan {
        try expect(UInt8(ascii: "\""), "a string")
        let start = index
        var hasEscapes = false
        while true {
            // The common case first: printable ASCII that is neither a quote nor a backslash.
            while index < bytes.count {
                let byte = bytes[index]
                guard byte >= 0x20 && byte < 0x80 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") else { break }
                index += 1
            }
            guard index < bytes.count else { throw error("unterminated string (started at byte \(start - 1))") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return JSONStringSpan(start: start, end: index - 1, hasEscapes: hasEscapes)
            } else if byte == UInt8(ascii: "\\") {
                hasEscapes = true
                try scanEscape()
            } else if byte < 0x20 {
                throw error("control character U+00\(byte < 0x10 ? "0" : "")\(String(byte, radix: 16, uppercase: true)) in a string (JSON needs it escaped)")
            } else {
                index += try Self.validUTF8Length(bytes, at: index)
            }
        }
    }

    /// Validates one escape at `index` (the backslash) and moves past it; `\u` high surrogates must be
    /// followed by a `\u` low surrogate, and a low one must not come alone.
    private mutating func scanEscape() throws(FeedSyntaxError) {
        let at = index
        guard index + 1 < bytes.count else { throw error("unterminated string") }
        switch bytes[index + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            index += 2
        case UInt8(ascii: "u"):
            let unit = try hexUnit(at: index + 2)
            index += 6
            if (0xDC00...0xDFFF).contains(unit) {
                throw error("invalid escape: unpaired low surrogate \\u\(String(unit, radix: 16))", at: at)
            }
            if (0xD800...0xDBFF).contains(unit) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u"),
                    (0xDC00...0xDFFF).contains(try hexUnit(at: index + 2))
                else {
                    throw error("invalid escape: unpaired high surrogate \\u\(String(unit, radix: 16))", at: at)
                }
                index += 6
            }
        default:
            throw error("invalid escape \\\(foundByte(at: index + 1)) in a string", at: at)
        }
    }

    private func foundByte(at offset: Int) -> String {
        let byte = bytes[offset]
        return (0x21...0x7E).contains(byte) ? String(Character(Unicode.Scalar(byte))) : "(byte 0x\(String(byte, radix: 16)))"
    }

    /// The UTF-16 code unit of the four hex digits at `offset`.
    private func hexUnit(at offset: Int) throws(FeedSyntaxError) -> UInt32 {
        guard offset + 4 <= bytes.count else { throw error("invalid escape: \\u needs four hex digits", at: offset - 2) }
        var unit: UInt32 = 0
        for position in offset..<offset + 4 {
            guard let digit = Self.hexValue(bytes[position]) else {
                throw error("invalid escape: \\u needs four hex digits", at: offset - 2)
            }
            unit = unit << 4 | UInt32(digit)
        }
        return unit
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The length of the well-formed UTF-8 sequence starting with a non-ASCII byte at `offset` (Unicode
    /// Table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF), or an error.
    static func validUTF8Length(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) throws(FeedSyntaxError) -> Int {
        let lead = bytes[offset]
        let length: Int, second: ClosedRange<UInt8>
        switch lead {
        case 0xC2...0xDF: (length, second) = (2, 0x80...0xBF)
        case 0xE0: (length, second) = (3, 0xA0...0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: (length, second) = (3, 0x80...0xBF)
        case 0xED: (length, second) = (3, 0x80...0x9F)
        case 0xF0: (length, second) = (4, 0x90...0xBF)
        case 0xF1...0xF3: (length, second) = (4, 0x80...0xBF)
        case 0xF4: (length, second) = (4, 0x80...0x8F)
        default: throw FeedSyntaxError("invalid UTF-8 (byte 0x\(String(lead, radix: 16, uppercase: true)))", at: offset)
        }
        guard offset + length <= bytes.count, second.contains(bytes[offset + 1]),
            (offset + 2..<offset + length).allSatisfy({ (0x80...0xBF).contains(bytes[$0]) })
        else {
            throw FeedSyntaxError("invalid UTF-8 (a truncated or malformed sequence)", at: offset)
        }
        return length
    }

    /// Appends the content of `span` (validated by `scanString`), escapes decoded, to `output` as UTF-8.
    func decode(_ span: JSONStringSpan, into output: inout [UInt8]) {
        output.removeAll(keepingCapacity: true)
        var position = span.start
        while position < span.end {
            let byte = bytes[position]
            guard byte == UInt8(ascii: "\\") else {
                output.append(byte)
                position += 1
                continue
            }
            let escaped = bytes[position + 1]
            position += 2
            switch escaped {
            case UInt8(ascii: "b"): output.append(0x08)
            case UInt8(ascii: "f"): output.append(0x0C)
            case UInt8(ascii: "n"): output.append(0x0A)
            case UInt8(ascii: "r"): output.append(0x0D)
            case UInt8(ascii: "t"): output.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = (try? hexUnit(at: position)) ?? 0xFFFD
                position += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    let low = (try? hexUnit(at: position + 2)) ?? 0xDC00
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    position += 6
                }
                output.append(contentsOf: String(Unicode.Scalar(scalar) ?? "\u{FFFD}").utf8)
            default: output.append(escaped)  // " \ /
            }
        }
    }

    // MARK: - Numbers and literals

    /// Reads a number (RFC 8259 grammar: `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`) and returns its
    /// bytes' range and whether it has an exponent.
    mutating func scanNumber() throws(FeedSyntaxError) -> (range: Range<Int>, hasExponent: Bool) {
        let start = index
        func digits(_ scanner: inout FeedScanner) -> Int {
            let first = scanner.index
            while let byte = scanner.peek, byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") { scanner.index += 1 }
            return scanner.index - first
        }
        func invalid(_ scanner: FeedScanner) -> FeedSyntaxError {
            let text = String(decoding: scanner.bytes[start..<min(scanner.index + 1, scanner.bytes.count)].prefix(40), as: UTF8.self)
            return scanner.error("invalid number \"\(text)\"", at: start)
        }
        if peek == UInt8(ascii: "-") { index += 1 }
        if peek == UInt8(ascii: "0") {
            index += 1
            if let byte = peek, byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") { throw invalid(self) }
        } else if digits(&self) == 0 {
            throw invalid(self)
        }
        if peek == UInt8(ascii: ".") {
            index += 1
            if digits(&self) == 0 { throw invalid(self) }
        }
        var hasExponent = false
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            hasExponent = true
            index += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            if digits(&self) == 0 { throw invalid(self) }
        }
        // A number runs into what cannot follow it, such as `1.2.3` or `1-2`: one bad number, said so.
        switch peek {
        case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "+"), UInt8(ascii: "-"): throw invalid(self)
        default: return (start..<index, hasExponent)
        }
    }

    /// Reads `true`, `false` or `null`.
    mutating func scanLiteral() throws(FeedSyntaxError) {
        for literal in ["true", "false", "null"] where bytes[index] == literal.utf8.first {
            let end = index + literal.utf8.count
            guard end <= bytes.count, bytes[index..<end].elementsEqual(literal.utf8) else { break }
            index = end
            return
        }
        let found = String(decoding: bytes[index..<min(index + 5, bytes.count)], as: UTF8.self)
        throw error("expected true, false or null, found \(found.debugDescription)")
    }

    // MARK: - Skipping

    /// Validates and skips one value of any kind, nested containers included, inside a container at `depth`.
    mutating func skipValue(depth: Int) throws(FeedSyntaxError) {
        var open: [UInt8] = []  // the closing bytes of the containers entered and not yet left
        var keyNext = false  // the next token is an object's key
        while true {
            skipWhitespace()
            if keyNext {
                guard peek == UInt8(ascii: "\"") else { throw error("expected a key string, found \(foundDescription)") }
                _ = try scanString()
                skipWhitespace()
                try expect(UInt8(ascii: ":"), "':' after a key")
                skipWhitespace()
            }
            switch peek ?? 0 {
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                guard depth + open.count + 1 <= Self.maximumDepth else {
                    throw error("nested deeper than \(Self.maximumDepth) levels")
                }
                let opener = bytes[index]
                let closer = opener == UInt8(ascii: "[") ? UInt8(ascii: "]") : UInt8(ascii: "}")
                index += 1
                skipWhitespace()
                if peek == closer {
                    index += 1
                } else {
                    open.append(closer)
                    keyNext = opener == UInt8(ascii: "{")
                    continue
                }
            case UInt8(ascii: "\""): _ = try scanString()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try scanNumber()
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"): try scanLiteral()
            default: throw error("expected a value, found \(foundDescription)")
            }
            // After a value: a comma leads to the next one, a closer leaves a container.
            while let closer = open.last {
                skipWhitespace()
                if peek == closer {
                    index += 1
                    open.removeLast()
                    continue
                }
                try separator(before: closer)
                keyNext = closer == UInt8(ascii: "}")
                break
            }
            if open.isEmpty { return }
        }
    }

    /// Consumes the comma between two members of a container closed by `closer`, refusing a trailing one.
    mutating func separator(before closer: UInt8) throws(FeedSyntaxError) {
        let what = closer == UInt8(ascii: "]") ? "',' or ']'" : "',' or '}'"
        guard peek == UInt8(ascii: ",") else { throw error("expected \(what), found \(foundDescription)") }
        let comma = index
        index += 1
        skipWhitespace()
        if peek == closer { throw error("trailing comma before '\(Character(Unicode.Scalar(closer)))'", at: comma) }
    }
}
