// libFuzzer entry point for PNGValidator.validate, both levels, with the default limits and with tight
// ones. Built by contrib/fuzz.sh together with Sources/EmojiArtPNG and CShims' png_read.c (not by SwiftPM).
// Besides crashes and ASan reports, the harness traps when the two levels disagree in a way the
// validator's documentation rules out; see docs/RELIABILITY.md.

import CPNG

/// Traps with `message` unless `condition` holds: a broken invariant is a finding, like a crash.
private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("invariant broken: \(message())") }
}

/// Small enough that fuzzed headers reach every limit check, large enough for the seed images' chunks.
private let tightLimits = PNGLimits(maxWidth: 64, maxHeight: 64, maxPixels: 2048, maxChunkSize: 4096, maxStoredChunks: 2)

private func check(_ bytes: [UInt8], limits: PNGLimits) {
    let structure = Result { () throws(PNGDefect) -> PNGInfo in try PNGValidator.validate(bytes, level: .structure, limits: limits) }
    let full = Result { () throws(PNGDefect) -> PNGInfo in try PNGValidator.validate(bytes, level: .full, limits: limits) }

    switch (structure, full) {
    case (.success(let shallow), .success(let deep)):
        require(shallow == deep, "the levels disagree on the header: \(shallow) vs \(deep)")
    case (.success(let info), .failure(let defect)):
        // Only the row decode and png_read_end come on top of the structure check.
        require(defect.kind == .decodeFailed || defect.kind == .outOfMemory, "full fails with \(defect) after structure passed")
        _ = info
    case (.failure(let defect), .success):
        require(false, "structure fails with \(defect) but full passes")
    case (.failure(let shallow), .failure(let deep)):
        require(shallow.kind == deep.kind, "the levels fail differently: \(shallow) vs \(deep)")
    }
    if case .success(let info) = structure {
        require(info.width >= 1 && info.height >= 1, "accepted an empty image \(info)")
        require(info.width <= limits.maxWidth && info.height <= limits.maxHeight, "accepted \(info) above \(limits)")
        require(UInt64(info.width) * UInt64(info.height) <= limits.maxPixels, "accepted \(info) above \(limits)")
        require(PNGValidator.hasSignature(bytes), "accepted bytes without the signature")
    }
    if case .failure(let defect) = structure {
        require(!defect.message.isEmpty, "a defect without a message")
        if let offset = defect.offset { require(offset >= 0 && offset <= bytes.count, "offset \(offset) outside the input") }
    }
}

/// `bytes` with the CRC of every complete chunk recomputed. Random mutations almost never keep a CRC right,
/// so without this copy the fuzzer would hardly ever get past the chunk walk into libpng.
private func withFixedCRCs(_ bytes: [UInt8]) -> [UInt8] {
    var fixed = bytes
    var offset = 8
    while offset + 12 <= fixed.count {
        let length = Int(fixed[offset]) << 24 | Int(fixed[offset + 1]) << 16 | Int(fixed[offset + 2]) << 8 | Int(fixed[offset + 3])
        guard length <= fixed.count - offset - 12 else { break }
        let crc = fixed.withUnsafeBufferPointer { UInt32(truncatingIfNeeded: crc32(0, $0.baseAddress! + offset + 4, uInt(length + 4))) }
        let at = offset + 8 + length
        (fixed[at], fixed[at + 1], fixed[at + 2], fixed[at + 3]) =
            (UInt8(crc >> 24), UInt8(truncatingIfNeeded: crc >> 16), UInt8(truncatingIfNeeded: crc >> 8), UInt8(truncatingIfNeeded: crc))
        offset = at + 4
    }
    return fixed
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPNG(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    check(bytes, limits: .default)
    check(bytes, limits: tightLimits)
    let fixed = withFixedCRCs(bytes)
    if fixed != bytes {
        check(fixed, limits: .default)
        check(fixed, limits: tightLimits)
    }
    return 0
}
