import CPNG

/// The structure check: the signature, then every chunk's framing, in one pass over the bytes, fed in order in
/// pieces of any size (the whole PNG in memory at once, or a file block by block), so a file is checked through a
/// bounded buffer with exactly the checks, in exactly the order, that bytes in memory get.
///
/// A chunk is `length (4, big-endian) | type (4) | data (length) | CRC-32 of type+data (4)`. The walk checks
/// each length against the spec (at most 2^31-1), against `PNGLimits.maxChunkSize` and against the bytes
/// left; each type for ASCII letters; each CRC with zlib's `crc32`; and the order: IHDR first (13 bytes,
/// dimensions within limits), IDAT present and contiguous, IEND empty and last, nothing after it.
/// The total count is known from the start (a buffer's count, a file's size), so a chunk that would run past the
/// end is refused at its header, before its bytes come. It keeps no more than the few bytes of a field that
/// straddles two pieces (a chunk header, IHDR's data, a CRC, the start of the data for a message).
struct PNGChunkWalk {
    /// The bytes the PNG has in all.
    let count: Int
    let limits: PNGLimits
    /// Bytes taken so far.
    private(set) var consumed = 0
    private var stage = Stage.signature
    /// The field being gathered (the signature, a chunk header, a stored CRC: see ``Stage``), at most 8 bytes.
    private var field = InlineBytes()
    /// The first bytes of the data, for a message that shows what came instead of a PNG.
    private var head = InlineBytes()
    private var info: PNGInfo?
    private var previous: ChunkType?
    private var sawIDAT = false
    private var idatRunEnded = false
    /// The chunk being read: where it starts, its length and type, the CRC so far, the data bytes still to come.
    private var chunkOffset = 0
    private var length: UInt32 = 0
    private var type = ChunkType(rawValue: 0)
    private var crc: uLong = 0
    private var dataLeft = 0
    /// IHDR's data, gathered as it passes (13 bytes).
    private var headerData = InlineBytes()

    /// What the walk waits for next.
    private enum Stage {
        /// The signature's 8 bytes (fewer when the data is shorter).
        case signature
        /// Not a PNG: the first bytes are gathered for the message, then the walk throws.
        case notPNG
        /// The next chunk's length and type (8 bytes).
        case chunkHeader
        /// The chunk's data, CRC'd as it passes.
        case chunkData
        /// The chunk's stored CRC (4 bytes).
        case storedCRC
        /// IEND was checked: the PNG is complete.
        case done(PNGInfo)
    }

    /// How many first bytes a "not a PNG" message shows.
    static let headLength = InlineBytes.capacity

    init(count: Int, limits: PNGLimits) {
        self.count = count
        self.limits = limits
    }

    /// Walks `bytes` and returns the IHDR facts, or throws the first defect found: every byte at once.
    static func walk(_ bytes: UnsafeBufferPointer<UInt8>, limits: PNGLimits) throws(PNGDefect) -> PNGInfo {
        var walk = PNGChunkWalk(count: bytes.count, limits: limits)
        try walk.consume(bytes)
        return try walk.finish()
    }

    /// Takes the next `bytes` of the PNG (`consumed` of ``count`` are taken already) and checks what they complete;
    /// throws the first defect found, after which the walk is over. Feeding more than ``count`` bytes in all is a
    /// programming error.
    mutating func consume(_ bytes: UnsafeBufferPointer<UInt8>) throws(PNGDefect) {
        precondition(bytes.count <= count - consumed, "more bytes than the PNG's count")
        if head.count < Self.headLength { head.append(contentsOf: bytes.prefix(Self.headLength - head.count)) }
        var rest = bytes[...]
        while !rest.isEmpty {
            switch stage {
            case .signature:
                guard gather(&rest, upTo: min(count, PNGSignature.bytes.count)) else { return }
                try checkSignature()
            case .notPNG:
                consumed += rest.count
                rest = rest[rest.endIndex...]
                try refuseNotPNG()
            case .chunkHeader:
                guard gather(&rest, upTo: 8) else { return }
                try readChunkHeader()
            case .chunkData:
                let taken = rest.prefix(dataLeft)
                let piece = UnsafeBufferPointer(rebasing: taken)
                // crc32's length is a uInt (32 bits): fine, a piece is at most a chunk's 2^31-1 bytes.
                crc = crc32(crc, piece.baseAddress, uInt(piece.count))
                if type == .header && length == 13 { headerData.append(contentsOf: taken) }
                dataLeft -= piece.count
                consumed += piece.count
                rest = rest[taken.endIndex...]
                if dataLeft == 0 { stage = .storedCRC }
            case .storedCRC:
                guard gather(&rest, upTo: 4) else { return }
                try endChunk()
            case .done:
                preconditionFailure("unreachable: the walk is done only at the PNG's last byte")
            }
        }
    }

    /// The IHDR facts once every byte was taken and found good. Only empty data is still undecided here (it ends
    /// inside the signature); finishing before every byte was taken is a programming error.
    func finish() throws(PNGDefect) -> PNGInfo {
        if case .done(let info) = stage { return info }
        precondition(consumed == count, "the walk was finished after \(consumed) of \(count) bytes")
        var empty = self
        try empty.checkSignature()
        preconditionFailure("unreachable: every byte was taken and the walk did not end")
    }

    /// Moves bytes from `rest` into ``field`` until it holds `wanted`; true when it does (the field is complete and
    /// ``consumed`` counts it).
    private mutating func gather(_ rest: inout Slice<UnsafeBufferPointer<UInt8>>, upTo wanted: Int) -> Bool {
        let taken = rest.prefix(wanted - field.count)
        field.append(contentsOf: taken)
        consumed += taken.count
        rest = rest[taken.endIndex...]
        return field.count == wanted
    }

    /// The signature's 8 bytes are gathered, or all the data when it is shorter: a PNG goes on to its first chunk;
    /// data shorter than a signature is truncated when it agrees with the signature as far as it goes.
    private mutating func checkSignature() throws(PNGDefect) {
        guard count >= PNGSignature.bytes.count else {
            if PNGSignature.isTruncatedPrefix(field.bytes) {
                throw PNGDefect(
                    .truncated,
                    "truncated inside the PNG signature: \(count) of \(PNGSignature.bytes.count) bytes", offset: 0)
            }
            throw PNGDefect(
                .notPNG, "not a PNG: \(count) bytes starting \(Self.preview(field.bytes, continues: false))", offset: 0)
        }
        guard field.uint64(at: 0) == PNGSignature.value else {
            stage = .notPNG
            try refuseNotPNG()
            return
        }
        field.removeAll()
        try startChunk()
    }

    /// Not a PNG: refused once the first bytes are there for the message.
    private func refuseNotPNG() throws(PNGDefect) {
        guard head.count == min(count, Self.headLength) else { return }
        throw PNGDefect(
            .notPNG, "not a PNG: the data starts \(Self.preview(head.bytes, continues: count > head.count))", offset: 0)
    }

    /// At a chunk boundary: what the bytes left say before the next chunk's header comes.
    private mutating func startChunk() throws(PNGDefect) {
        let offset = consumed
        let remaining = count - offset
        guard remaining > 0 else {
            guard let previous else {
                throw PNGDefect(.truncated, "truncated after the signature: no chunks", offset: offset)
            }
            throw PNGDefect(
                .missingIEND,
                "no IEND chunk: the data ends after chunk \(previous) at offset \(offset) (cut at a chunk boundary?)",
                offset: offset)
        }
        guard remaining >= 8 else {
            throw PNGDefect(
                .truncated,
                "truncated inside the chunk header at offset \(offset): \(remaining) of 8 bytes",
                offset: offset)
        }
        chunkOffset = offset
        stage = .chunkHeader
    }

    /// The gathered chunk header: its length and type checked, the chunk's bytes checked against what is left.
    private mutating func readChunkHeader() throws(PNGDefect) {
        let offset = chunkOffset
        length = field.uint32(at: 0)
        type = ChunkType(rawValue: field.uint32(at: 4))
        let type = self.type
        var at: String { "chunk \(type) at offset \(offset)" }  // formatted only for a defect

        if info == nil && type != .header {
            throw PNGDefect(.missingIHDR, "the first chunk is \(type), not IHDR (offset \(offset))", offset: offset)
        }
        guard length <= 0x7FFF_FFFF else {
            throw PNGDefect(
                .badChunkLength, "\(at): length \(length) is above the PNG maximum 2^31-1", offset: offset)
        }
        guard type.isLetters else {
            throw PNGDefect(.badChunkType, "\(at): the type is not four ASCII letters", offset: offset)
        }
        guard length <= limits.maxChunkSize else {
            throw PNGDefect(
                .chunkTooLarge,
                "\(at): length \(length) is above the limit of \(limits.maxChunkSize) bytes",
                offset: offset)
        }
        let chunkSize = 12 + Int(length)
        let remaining = count - offset
        guard chunkSize <= remaining else {
            throw PNGDefect(
                .truncated,
                "truncated inside \(at): it needs \(chunkSize) bytes, \(remaining) are left",
                offset: offset)
        }
        crc = withUnsafeBytes(of: type.rawValue.bigEndian) { crc32(0, $0.baseAddress!.assumingMemoryBound(to: Bytef.self), 4) }
        field.removeAll()
        headerData.removeAll()
        dataLeft = Int(length)
        stage = dataLeft > 0 ? .chunkData : .storedCRC
    }

    /// The gathered stored CRC: compared, then the chunk's place in the order checked.
    private mutating func endChunk() throws(PNGDefect) {
        let offset = chunkOffset
        let type = self.type
        var at: String { "chunk \(type) at offset \(offset)" }  // formatted only for a defect
        let stored = field.uint32(at: 0)
        field.removeAll()
        let computed = UInt32(truncatingIfNeeded: crc)
        guard stored == computed else {
            throw PNGDefect(
                .badCRC,
                "\(at): CRC mismatch (stored \(Self.hex(stored)), computed \(Self.hex(computed)))",
                offset: offset)
        }

        switch type {
        case .header:
            guard info == nil else {
                throw PNGDefect(.badChunkOrder, "\(at): a second IHDR", offset: offset)
            }
            info = try Self.header(headerData, length: length, chunkOffset: offset, limits: limits)
        case .imageData:
            guard !idatRunEnded else {
                throw PNGDefect(
                    .badChunkOrder, "\(at): IDAT chunks are not contiguous (\(previous!) came between)",
                    offset: offset)
            }
            sawIDAT = true
        case .end:
            guard sawIDAT else {
                throw PNGDefect(.missingIDAT, "\(at): IEND before any IDAT, there is no image data", offset: offset)
            }
            guard length == 0 else {
                throw PNGDefect(.badChunkLength, "\(at): IEND must be empty, it has \(length) bytes", offset: offset)
            }
            let end = offset + 12
            guard end == count else {
                throw PNGDefect(
                    .dataAfterIEND,
                    "\(count - end) bytes after the IEND chunk at offset \(offset)", offset: end)
            }
            guard let info else {
                preconditionFailure("unreachable: the first chunk was checked to be IHDR")
            }
            stage = .done(info)
            return
        case .palette:
            guard !sawIDAT else {
                throw PNGDefect(.badChunkOrder, "\(at): PLTE after the image data", offset: offset)
            }
        default:
            guard !type.isCritical else {
                throw PNGDefect(.badChunkType, "\(at): unknown critical chunk", offset: offset)
            }
            if sawIDAT { idatRunEnded = true }
        }
        previous = type
        try startChunk()
    }

    /// Checks IHDR's length and the dimensions against `limits`. The other fields (bit depth, colour
    /// type, methods) are left to libpng's `png_read_info`, which knows every rule. `data`: IHDR's 13 bytes.
    private static func header(
        _ data: InlineBytes, length: UInt32, chunkOffset: Int, limits: PNGLimits
    ) throws(PNGDefect) -> PNGInfo {
        guard length == 13 else {
            throw PNGDefect(
                .badIHDR, "chunk IHDR at offset \(chunkOffset): \(length) bytes, IHDR has 13", offset: chunkOffset)
        }
        let width = data.uint32(at: 0)
        let height = data.uint32(at: 4)
        guard width <= limits.maxWidth && height <= limits.maxHeight else {
            throw PNGDefect(
                .tooLarge,
                "image is \(width)x\(height), above the limit of \(limits.maxWidth)x\(limits.maxHeight)",
                offset: chunkOffset)
        }
        let pixels = UInt64(width) * UInt64(height)
        guard pixels <= limits.maxPixels else {
            throw PNGDefect(
                .tooLarge,
                "image is \(width)x\(height) = \(pixels) pixels, above the limit of \(limits.maxPixels) pixels",
                offset: chunkOffset)
        }
        return PNGInfo(
            width: width, height: height, bitDepth: data[8], colorType: data[9], interlaced: data[12] == 1)
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// The first bytes as a quoted string a person can read: printable ASCII as is, the rest as `\xNN`, and `...`
    /// when the data `continues` after them. Shows at a glance that the "image" is `{"error": "File not found."}`
    /// or an HTML page.
    static func preview(_ bytes: [UInt8], continues: Bool) -> String {
        var text = "\""
        for byte in bytes {
            switch byte {
            case 0x22: text += "\\\""
            case 0x5C: text += "\\\\"
            case 0x20...0x7E: text.unicodeScalars.append(Unicode.Scalar(byte))
            default: text += "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }
        }
        return text + (continues ? "...\"" : "\"")
    }
}

/// A chunk type: four bytes, big-endian in a UInt32. Prints as its letters, or `\xNN` escapes if not.
struct ChunkType: RawRepresentable, Equatable, CustomStringConvertible {
    let rawValue: UInt32

    static let header = ChunkType(rawValue: 0x4948_4452)  // IHDR
    static let palette = ChunkType(rawValue: 0x504C_5445)  // PLTE
    static let imageData = ChunkType(rawValue: 0x4944_4154)  // IDAT
    static let end = ChunkType(rawValue: 0x4945_4E44)  // IEND

    /// Byte `index` (0...3) of the type, in file order.
    private func byte(_ index: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: rawValue >> UInt32(24 - 8 * index))
    }

    /// All four bytes are ASCII letters (A-Z, a-z), as the spec requires.
    var isLetters: Bool {
        // Setting bit 5 maps A-Z onto a-z and nothing else onto a-z.
        (0..<4).allSatisfy { (0x61...0x7A).contains(byte($0) | 0x20) }
    }

    /// Bit 5 of the first byte clear (an upper-case first letter): a decoder must understand the chunk.
    var isCritical: Bool {
        rawValue & 0x2000_0000 == 0
    }

    var description: String {
        (0..<4).map { index in
            let value = byte(index)
            return (0x21...0x7E).contains(value)
                ? String(Unicode.Scalar(value)) : "\\x" + (value < 16 ? "0" : "") + String(value, radix: 16)
        }.joined()
    }
}

/// A few bytes kept in place, with no allocation: a field of a chunk that straddles two pieces of the input, or the
/// data's first bytes for a message.
struct InlineBytes {
    /// The most it holds: the longest field the walk keeps (the first bytes shown in a message).
    static let capacity = 24
    private var storage = InlineArray<24, UInt8>(repeating: 0)
    private(set) var count = 0

    /// Appends `bytes`; together they must fit in ``capacity``.
    mutating func append(contentsOf bytes: Slice<UnsafeBufferPointer<UInt8>>) {
        precondition(count + bytes.count <= Self.capacity, "more bytes than an InlineBytes holds")
        for byte in bytes {
            storage[count] = byte
            count += 1
        }
    }

    mutating func removeAll() {
        count = 0
    }

    subscript(index: Int) -> UInt8 {
        precondition(index < count, "index \(index) past the \(count) bytes held")
        return storage[index]
    }

    /// The bytes held, as an array (for a message).
    var bytes: [UInt8] {
        (0..<count).map { storage[$0] }
    }

    /// The big-endian UInt32 at `offset`; 4 bytes must be held there.
    func uint32(at offset: Int) -> UInt32 {
        (offset..<offset + 4).reduce(0) { $0 << 8 | UInt32(self[$1]) }
    }

    /// The big-endian UInt64 at `offset`; 8 bytes must be held there.
    func uint64(at offset: Int) -> UInt64 {
        (offset..<offset + 8).reduce(0) { $0 << 8 | UInt64(self[$1]) }
    }
}
