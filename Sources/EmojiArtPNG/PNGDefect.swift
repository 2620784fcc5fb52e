/// Why bytes are not an acceptable PNG: what `PNGValidator.validate` throws.
///
/// `kind` is for code (and the `reason=` of a log line); `message` is for the person reading the log and
/// says where the defect is, e.g. `chunk IDAT at offset 1234: CRC mismatch (stored 0x1a2b3c4d, computed
/// 0x5e6f7a8b)`. Defects found by libpng carry the libpng function that failed and libpng's own words.
public struct PNGDefect: Error, Sendable, Equatable, CustomStringConvertible {
    /// The class of defect. Raw values are stable: they appear in logs.
    public enum Kind: String, Sendable, CaseIterable {
        /// The data does not start with the PNG signature (e.g. the gallery's JSON error body).
        case notPNG
        /// The data ends inside the signature or inside a chunk (header, data or CRC).
        case truncated
        /// A chunk length above 2^31-1 (forbidden by the PNG spec), or an IEND that is not empty.
        case badChunkLength
        /// A chunk type that is not four ASCII letters, or an unknown critical chunk (first letter upper
        /// case), which no decoder may skip.
        case badChunkType
        /// A chunk's stored CRC-32 does not match its type and data.
        case badCRC
        /// The first chunk is not IHDR.
        case missingIHDR
        /// IHDR is not 13 bytes, or libpng rejects its values (zero size, bit depth 3, a bit depth the
        /// colour type does not allow, an unknown compression, filter or interlace method).
        case badIHDR
        /// A second IHDR, or IDAT chunks that are not contiguous.
        case badChunkOrder
        /// IEND comes before any IDAT: there is no image data.
        case missingIDAT
        /// The data ends cleanly after a chunk, but that chunk was not IEND. This is also what a download
        /// cut exactly at a chunk boundary looks like.
        case missingIEND
        /// Bytes follow the IEND chunk. Refused on purpose: decoders ignore them, but a mirror must store
        /// exactly the image, and trailing bytes mean a concatenation, an append or a mangled transfer.
        case dataAfterIEND
        /// IHDR declares more pixels, or a wider or taller image, than `PNGLimits` allows.
        case tooLarge
        /// A chunk declares more data than `PNGLimits.maxChunkSize`.
        case chunkTooLarge
        /// libpng rejects a chunk before the image data other than IHDR (e.g. a palette image without
        /// PLTE, a PLTE with more entries than the bit depth allows).
        case badChunkData
        /// libpng fails while decoding the image data or reading what follows it (`.full` only): a broken
        /// zlib stream, an Adler-32 mismatch, too little or too much image data, a bad filter byte.
        case decodeFailed
        /// libpng or the row buffer could not get memory.
        case outOfMemory
    }

    /// The class of defect.
    public let kind: Kind
    /// One line for a person: where the defect is and what is wrong.
    public let message: String
    /// Byte offset in the input of the chunk (or signature) where the defect was found; nil for defects
    /// reported by libpng, which does not say where it was.
    public let offset: Int?
    /// The libpng function that failed (`png_read_info`, `png_read_row`, `png_read_end`,
    /// `png_create_read_struct`), nil for defects found by the chunk walk.
    public let libpngFunction: String?

    /// Creates a defect. `offset` and `libpngFunction` default to nil.
    public init(_ kind: Kind, _ message: String, offset: Int? = nil, libpngFunction: String? = nil) {
        self.kind = kind
        self.message = message
        self.offset = offset
        self.libpngFunction = libpngFunction
    }

    /// The message, for a person: `chunk IDAT at offset 1234: CRC mismatch (...)`, `not a PNG: 57 bytes starting
    /// ...`. The kind's name is for code and tests, not for the log or stderr.
    public var description: String {
        message
    }
}
