import EmojiArtPNG
import Foundation
import Testing

/// The PNG fuzzer's seeds (`Tests/Fuzz/corpus/png/`) and kept crashers (`Tests/Fuzz/crashers/png/`) as
/// regression tests of the normal suite: each file keeps the verdict it has, and both levels agree on it the
/// way `contrib/fuzz/PNGFuzzer.swift` demands (docs/RELIABILITY.md, "Fuzzing").
@Suite("PNG fuzz corpus and crashers", .timeLimit(.minutes(1)))
struct FuzzCorpusTests {
    /// `Tests/Fuzz/<kind>/png`, found from this file's place in the repository.
    static func directory(_ kind: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/\(kind)/png")
    }

    /// Every regular, non-hidden file in `Tests/Fuzz/<kind>/png`, by name.
    static func files(_ kind: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory(kind).path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted()
    }

    static func bytes(_ kind: String, _ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory(kind).appendingPathComponent(name)))
    }

    /// What each seed is: nil for a valid PNG, else the defect kind both levels must report.
    static let seedVerdicts: [String: PNGDefect.Kind?] = [
        "gallery-image-3.png": nil, "rgba-8x8.png": nil, "gray-16x4.png": nil, "gray1-9x3.png": nil, "palette-4x4.png": nil,
        "rgb16-2x2.png": nil, "interlaced-5x5.png": nil, "ancillary-chunks.png": nil, "split-idat.png": nil,
        "trailing-after-iend.png": .dataAfterIEND, "truncated-in-idat.png": .truncated, "bad-crc.png": .badCRC,
        "huge-ihdr.png": .tooLarge, "signature-only.png": .truncated, "error-json": .notPNG,
    ]

    @Test("every seed has a known verdict, and the corpus has every seed")
    func seedsAreKnown() {
        #expect(Set(Self.files("corpus")) == Set(Self.seedVerdicts.keys))
    }

    @Test("each seed keeps its verdict at both levels", arguments: FuzzCorpusTests.files("corpus"))
    func seedVerdict(name: String) throws {
        let bytes = try Self.bytes("corpus", name)
        let expected = try #require(Self.seedVerdicts[name], "unknown seed \(name): add its verdict")
        for level in PNGVerification.allCases {
            #expect(defect(bytes, level: level)?.kind == expected, "\(name) at \(level)")
        }
    }

    @Test("the levels agree on every seed and crasher", arguments: FuzzCorpusTests.files("corpus").map { ("corpus", $0) }
        + FuzzCorpusTests.files("crashers").map { ("crashers", $0) })
    func levelsAgree(kind: String, name: String) throws {
        let bytes = try Self.bytes(kind, name)
        let structure = defect(bytes, level: .structure)
        let full = defect(bytes, level: .full)
        if let structure {
            #expect(full?.kind == structure.kind, "\(name): a structure defect is a full defect of the same kind")
        } else if let full {
            #expect([.decodeFailed, .outOfMemory].contains(full.kind), "\(name): only decoding can add a defect")
        }
    }
}
