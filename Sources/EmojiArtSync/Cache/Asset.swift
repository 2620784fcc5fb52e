/// A valid image as the agent knows it: the key, the size and SHA-256 of the exact bytes the server sent, and
/// the bytes themselves when this access read or fetched them (the memory cache keeps the asset without them). Immutable and `Sendable`, so the memory cache,
/// the database and the log can all hold it.
///
/// `bytes` is nil for a disk hit the agent trusted without reading the file (its `lstat` fingerprint is the
/// one recorded when the agent last wrote or verified it): a warm pass over a large gallery then costs one
/// `lstat` per file and holds no image in memory.
struct Asset: Sendable, Equatable {
    let key: AssetKey
    let size: Int
    /// Lowercase hex SHA-256 of the bytes, when this access fetched or read them; nil for a file trusted by its
    /// fingerprint and for what the memory cache keeps (the index has the digest; no access reads it from memory).
    let sha256: String?
    let bytes: [UInt8]?
    /// The PNG's dimensions, when the bytes were validated by this access.
    let width: UInt32?
    let height: UInt32?

    /// An asset whose bytes are at hand (fetched, or read and verified).
    init(key: AssetKey, bytes: [UInt8], sha256: String, width: UInt32, height: UInt32) {
        self.key = key
        self.size = bytes.count
        self.sha256 = sha256
        self.bytes = bytes
        self.width = width
        self.height = height
    }

    /// An asset whose bytes went to a file as they arrived (validated from it): its facts, no bytes.
    init(streamed key: AssetKey, size: Int, sha256: String, width: UInt32, height: UInt32) {
        self.init(key: key, size: size, sha256: sha256, width: width, height: height)
    }

    /// An asset on disk trusted by its fingerprint, bytes not read.
    init(trustedOnDisk key: AssetKey, size: Int) {
        self.key = key
        self.size = size
        self.sha256 = nil
        self.bytes = nil
        self.width = nil
        self.height = nil
    }

    /// The asset without its bytes: what the memory cache keeps once the file is on disk. No access reads image
    /// bytes from memory (a repair fetches from the gallery; the file is the copy), so holding them would only
    /// cost memory: 64 MiB of cache is about 260,000 records, not 1,300 full-size images.
    var withoutBytes: Asset {
        Asset(record: key, size: size, width: width, height: height)
    }

    private init(key: AssetKey, size: Int, sha256: String?, width: UInt32?, height: UInt32?) {
        self.key = key
        self.size = size
        self.sha256 = sha256
        self.bytes = nil
        self.width = width
        self.height = height
    }

    /// An asset as the memory cache keeps it (`MemoryCache`): its facts, no bytes, no digest.
    init(record key: AssetKey, size: Int, width: UInt32?, height: UInt32?) {
        self.init(key: key, size: size, sha256: nil, width: width, height: height)
    }

    /// What the memory cache counts for one record against `--memory-limit`: a fixed allowance (the slot, the
    /// key's storage, its entry in the cache's table), so that the limit bounds the number of records.
    static let recordCost = 256

    /// Lowercase hex SHA-256 of `bytes`. Pure; callers run it off the actors.
    static func digest(_ bytes: [UInt8]) -> String {
        SHA256Digest.hex(of: bytes)
    }
}

/// Where an asset access was served from. The log says `hit=memory|disk|network`.
public enum Hit: String, Sendable, Equatable, CaseIterable {
    case memory, disk, network
}
