@testable import EmojiArtSync
import Testing

/// SHA-256 through libcrypto, with the algorithm fetched once and shared: the standard's test vectors (FIPS 180-2),
/// on one thread and on many at once.
struct SHA256DigestTests {
    static let vectors: [(input: String, hex: String)] = [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ]

    @Test func theStandardsVectors() {
        for (input, hex) in Self.vectors {
            #expect(SHA256Digest.hex(of: Array(input.utf8)) == hex, "\(input)")
            let inPlace = Array(input.utf8).withUnsafeBytes { bytes in
                SHA256Digest.withDigest(of: bytes) { SHA256Digest.hexString(Array($0)) }
            }
            #expect(inPlace == hex)
        }
    }

    @Test func manyThreadsAtOnce() async {
        let wrong = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var wrong = 0
                    for round in 0..<2_000 {
                        let (input, hex) = Self.vectors[round % Self.vectors.count]
                        if SHA256Digest.hex(of: Array(input.utf8)) != hex { wrong += 1 }
                    }
                    return wrong
                }
            }
            return await group.reduce(0, +)
        }
        #expect(wrong == 0)
    }
}
