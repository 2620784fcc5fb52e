import Foundation
import Testing

@testable import EmojiArtPNG

#if canImport(Glibc)
import Glibc
#endif

/// A PNG in a file gets exactly the verdict, and the defect, that the same bytes get in memory: the chunk walk takes
/// the bytes in pieces of any size, and libpng reads the file through its own buffer. Checked over the fuzz corpus
/// and crashers and over every cut and every flipped byte of a small image and of one larger than the file's
/// read blocks, at both levels.
@Suite("PNGValidator checks a file as it checks the same bytes in memory", .timeLimit(.minutes(1)))
struct FileValidationTests {
    /// Inputs of every kind: valid images, each defect the walk and libpng find, the fuzzer's files.
    static func inputs() throws -> [(name: String, bytes: [UInt8])] {
        var inputs: [(String, [UInt8])] = []
        for kind in ["corpus", "crashers"] {
            for name in FuzzCorpusTests.files(kind) { inputs.append(("\(kind)/\(name)", try FuzzCorpusTests.bytes(kind, name))) }
        }
        let small = try TestImages.encoded(width: 6, height: 5, format: .palette, seed: 3)
        for cut in 0..<small.count { inputs.append(("small cut at \(cut)", Array(small.prefix(cut)))) }
        for offset in small.indices {
            var flipped = small
            flipped[offset] ^= 0xFF
            inputs.append(("small flipped at \(offset)", flipped))
        }
        // Damage under a valid CRC: only libpng's decode (`.full`) finds it.
        if let data = ChunkLocation.first("IDAT", in: small) {
            for offset in data.dataOffset..<data.crcOffset {
                var damaged = small
                damaged[offset] ^= 0x5A
                damaged.fixCRC(of: data)
                inputs.append(("small IDAT damaged under its CRC at \(offset)", damaged))
            }
        }
        // An IHDR libpng refuses (bit depth 3), under a valid CRC.
        if let header = ChunkLocation.first("IHDR", in: small) {
            var odd = small
            odd[header.dataOffset + 8] = 3
            odd.fixCRC(of: header)
            inputs.append(("small with bit depth 3", odd))
        }
        // Larger than a read block (64 KiB), with chunks that straddle the blocks' edges.
        let large = try TestImages.encoded(width: 300, height: 200, format: .rgba, seed: 9)
        inputs.append(("large", large))
        inputs.append(("large with a trailing byte", large + [0]))
        for place in [65_530, 65_536, 65_541, 131_072, large.count - 13, large.count - 1] where place < large.count {
            inputs.append(("large cut at \(place)", Array(large.prefix(place))))
            var flipped = large
            flipped[place] ^= 0x01
            inputs.append(("large flipped at \(place)", flipped))
        }
        inputs.append(("JSON error body", Array(#"{"error": "File not found."}"#.utf8)))
        inputs.append(("signature prefix", Array(TestImages.signature.prefix(5))))
        inputs.append(("empty", []))
        return inputs
    }

    /// What `validate` says of bytes in memory.
    static func memoryVerdict(_ bytes: [UInt8], level: PNGVerification) -> Result<PNGInfo, PNGFileFailure> {
        Result { () throws(PNGDefect) in try PNGValidator.validate(bytes, level: level) }.mapError { .defect($0) }
    }

    /// What `validate(file:)` says of the same bytes in the file `fd` (rewritten for them), and the bytes it showed
    /// its observer.
    static func fileVerdict(
        _ bytes: [UInt8], in fd: Int32, level: PNGVerification
    ) throws -> (Result<PNGInfo, PNGFileFailure>, observed: [UInt8]) {
        try #require(ftruncate(fd, 0) == 0)
        let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        try #require(written == bytes.count)
        var observed: [UInt8] = []
        let verdict = Result { () throws(PNGFileFailure) in
            try PNGValidator.validate(file: fd, size: bytes.count, level: level) { observed.append(contentsOf: $0) }
        }
        return (verdict, observed)
    }

    @Test("every input gets the same verdict from a file as from memory, at both levels")
    func fileVerdictIsMemoryVerdict() throws {
        let path = NSTemporaryDirectory() + "png-file-\(UUID().uuidString)"
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer {
            close(fd)
            unlink(path)
        }
        let inputs = try Self.inputs()
        var kinds = Set<PNGDefect.Kind>()
        var valid = 0
        for (name, bytes) in inputs {
            for level in PNGVerification.allCases {
                let memory = Self.memoryVerdict(bytes, level: level)
                let (file, observed) = try Self.fileVerdict(bytes, in: fd, level: level)
                #expect(file == memory, "\(name) at \(level)")
                switch memory {
                case .success:
                    valid += 1
                    #expect(observed == bytes, "\(name): the observer sees every byte of a valid file, in order")
                case .failure(.defect(let defect)):
                    kinds.insert(defect.kind)
                case .failure(.unreadable):
                    Issue.record("bytes in memory are never unreadable")
                }
            }
        }
        // The inputs reach the walk's defects and libpng's, so the comparison means something.
        #expect(valid >= 20)
        let expected: Set<PNGDefect.Kind> = [
            .notPNG, .truncated, .badChunkType, .badCRC, .missingIEND, .dataAfterIEND, .decodeFailed, .badIHDR,
        ]
        #expect(kinds.isSuperset(of: expected), "found \(kinds)")
    }

    @Test("the walk fed in small pieces finds what it finds fed the whole")
    func piecesMakeNoDifference() throws {
        for (name, bytes) in try Self.inputs() {
            let whole = Result { () throws(PNGDefect) in
                try bytes.withUnsafeBufferPointer { (buffer) throws(PNGDefect) in
                    try PNGChunkWalk.walk(buffer, limits: .default)
                }
            }
            // Byte by byte where it is cheap; the large image in pieces that straddle its chunks' fields.
            for pieceSize in bytes.count < 4096 ? [1, 3, 8, 13] : [7, 4099] {
                let pieces = Result { () throws(PNGDefect) -> PNGInfo in
                    var walk = PNGChunkWalk(count: bytes.count, limits: .default)
                    try bytes.withUnsafeBufferPointer { (buffer) throws(PNGDefect) in
                        var start = 0
                        while start < buffer.count {
                            let end = min(start + pieceSize, buffer.count)
                            try walk.consume(UnsafeBufferPointer(rebasing: buffer[start..<end]))
                            start = end
                        }
                    }
                    return try walk.finish()
                }
                #expect(pieces == whole, "\(name) in pieces of \(pieceSize)")
            }
        }
    }

    @Test("a file that ends before its size is truncated, and one that cannot be read is unreadable, not a defect")
    func shortAndUnreadableFiles() throws {
        let image = try TestImages.encoded(width: 8, height: 8, format: .rgba)
        let path = NSTemporaryDirectory() + "png-file-\(UUID().uuidString)"
        try Data(image.prefix(200)).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        // The size the caller found is the whole image's; the file was cut since.
        let short = Result { () throws(PNGFileFailure) in try PNGValidator.validate(file: fd, size: image.count) }
        close(fd)
        guard case .failure(.defect(let defect)) = short else {
            Issue.record("expected a defect, got \(short)")
            return
        }
        #expect(defect.kind == .truncated)
        #expect(defect.message.contains("the file ends after 200 of its \(image.count) bytes"), "\(defect)")

        let directory = open(NSTemporaryDirectory(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(directory >= 0)
        defer { close(directory) }
        let unreadable = Result { () throws(PNGFileFailure) in try PNGValidator.validate(file: directory, size: 100) }
        #expect(unreadable == .failure(.unreadable(call: "pread", errno: EISDIR)))
    }
}
