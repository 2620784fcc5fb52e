import CCrypto

/// SHA-256 through the system's OpenSSL libcrypto (EVP interface): the digest of the asset files, of the
/// manifest's records and of the keys behind hashed file names.
///
/// A value type you feed bytes to (`update`) and then `finalize`; `hex(of:)` is the one-shot form. Pure work,
/// so callers run it off the actors.
struct SHA256Digest: ~Copyable {
    private let context: OpaquePointer

    init() {
        // EVP_MD_CTX_new only fails when malloc does; the process cannot go on without memory anyway.
        guard let context = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new: out of memory") }
        self.context = context
        EVP_DigestInit_ex(context, Self.algorithm, nil)
    }

    /// SHA-256's implementation, fetched from OpenSSL's providers once. `EVP_sha256()` hands out a placeholder that
    /// makes every `EVP_DigestInit_ex` fetch the implementation again (OpenSSL 3's "implicit fetch", a lookup under
    /// a lock: 2.7 % of a warm pass, which makes 100,000 digests of feed urls). Falls back to that placeholder if
    /// the fetch fails.
    // OpenSSL documents a fetched EVP_MD as immutable once made and shareable between threads (crypto(7),
    // "Algorithm Fetching"); this one is fetched once, never freed, and only ever passed to EVP_DigestInit_ex.
    // SAFETY: the pointer is written once (a `static let`) and the object it names is only read, by any thread.
    private nonisolated(unsafe) static let algorithm: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil) ?? EVP_sha256()

    deinit { EVP_MD_CTX_free(context) }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    /// The 32-byte digest of everything fed so far.
    consuming func finalize() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = digest.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
        return Array(digest.prefix(Int(length)))
    }

    /// Calls `body` with the 32-byte digest of `bytes`, held in place: no array is made for it.
    static func withDigest<R>(of bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        var digest = SHA256Digest()
        digest.update(bytes)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int(EVP_MAX_MD_SIZE)) { buffer in
            var length: UInt32 = 0
            EVP_DigestFinal_ex(digest.context, buffer.baseAddress, &length)
            return body(UnsafeRawBufferPointer(start: buffer.baseAddress, count: Int(length)))
        }
    }

    /// The 32-byte digest of `bytes`.
    static func bytes(of bytes: [UInt8]) -> [UInt8] {
        var digest = SHA256Digest()
        bytes.withUnsafeBytes { digest.update($0) }
        return digest.finalize()
    }

    /// Lowercase hex SHA-256 of `bytes`.
    static func hex(of bytes: [UInt8]) -> String {
        hexString(Self.bytes(of: bytes))
    }

    /// Lowercase hex of `bytes`.
    static func hexString(_ bytes: [UInt8]) -> String {
        let table = Array("0123456789abcdef".utf8)
        var hex = [UInt8]()
        hex.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            hex.append(table[Int(byte >> 4)])
            hex.append(table[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}
