/// The 8-byte signature every PNG starts with: `\x89 P N G \r \n \x1A \n`.
///
/// The bytes are chosen to break under the usual mangling (7-bit transfer, CRLF or LF conversion,
/// `type` stopping at Ctrl-Z), so a match is a strong hint and a mismatch is conclusive.
public enum PNGSignature {
    /// The signature bytes, in order.
    public static let bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// The signature's 8 bytes read as one big-endian number.
    static let value: UInt64 = 0x8950_4E47_0D0A_1A0A

    /// Whether `data` starts with the full signature. Cheap (8 comparisons); no other check is made.
    public static func isPresent<Bytes: Collection<UInt8>>(in data: Bytes) -> Bool {
        data.starts(with: bytes)
    }

    /// Whether `data` could be the start of a PNG: it is shorter than 8 bytes and agrees with the
    /// signature as far as it goes (the empty input included). Tells "truncated" from "not a PNG".
    static func isTruncatedPrefix<Bytes: Collection<UInt8>>(_ data: Bytes) -> Bool {
        data.count < bytes.count && bytes.starts(with: data)
    }
}

extension PNGValidator {
    /// Whether `data` starts with the PNG signature: a quick sniff before a real `validate`, e.g. to log
    /// "server sent JSON, not PNG" without running the validator. Accepts any byte collection
    /// (`[UInt8]`, `ArraySlice<UInt8>`, ...).
    public static func hasSignature<Bytes: Collection<UInt8>>(_ data: Bytes) -> Bool {
        PNGSignature.isPresent(in: data)
    }
}
