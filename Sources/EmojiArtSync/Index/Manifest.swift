import FoundationEssentials
import Glibc

/// The index of earlier versions: `DIR/.emojiart-sync/manifest.json`, file name → key, size, SHA-256.
///
/// Read once, when an `AssetIndex` is created next to it, so that an upgrade keeps the ownership of every
/// file the older agent wrote. Never written any more.
struct Manifest: Codable, Sendable, Equatable {
    /// One file the agent wrote.
    struct Entry: Codable, Sendable, Equatable {
        var key: String
        var size: Int
        var sha256: String

        init(key: String, size: Int, sha256: String) {
            self.key = key
            self.size = size
            self.sha256 = sha256
        }
    }

    static let currentVersion = 1

    var version: Int = Manifest.currentVersion
    /// Keyed by file name (not key), because ownership is a property of a path.
    var files: [String: Entry] = [:]

    init() {}

    /// Loads the manifest at `path`. A missing file is an empty manifest. An unreadable or corrupt one is
    /// moved aside to `manifest.json.corrupt` (never deleted) and an empty manifest is returned with the
    /// reason, so the agent starts and the user can look at what was there.
    static func load(from path: String) -> (Manifest, warning: String?) {
        guard FileManager.default.fileExists(atPath: path) else { return (Manifest(), nil) }
        do {
            let bytes = try DiskStorage.readFile(at: path)
            let manifest = try JSONDecoder().decode(Manifest.self, from: Data(bytes))
            guard manifest.version == currentVersion else {
                throw SyncError(.configuration, "unsupported manifest version \(manifest.version)")
            }
            return (manifest, nil)
        } catch {
            let aside = path + ".corrupt"
            _ = rename(path, aside)
            return (Manifest(), "manifest unreadable (\(error)); moved to \(aside), starting with an empty one")
        }
    }
}
