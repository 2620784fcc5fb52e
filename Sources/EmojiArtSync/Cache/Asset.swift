/// A validated image: the exact bytes the server sent, their digest and the PNG's dimensions.
/// Immutable and `Sendable`, so the memory cache, the database and the log can all hold it.
public struct Asset: Sendable, Equatable {
    public let key: AssetKey
    public let bytes: [UInt8]
    /// Lowercase hex SHA-256 of `bytes`.
    public let sha256: String
    public let width: UInt32
    public let height: UInt32

    public init(key: AssetKey, bytes: [UInt8], sha256: String, width: UInt32, height: UInt32) {
        self.key = key
        self.bytes = bytes
        self.sha256 = sha256
        self.width = width
        self.height = height
    }

    /// Lowercase hex SHA-256 of `bytes`. Pure; callers run it off the actors.
    public static func digest(_ bytes: [UInt8]) -> String {
        SHA256Digest.hex(of: bytes)
    }
}

/// Where an asset access was served from. The log says `hit=memory|disk|network`.
public enum Hit: String, Sendable, Equatable, CaseIterable {
    case memory, disk, network
}
