import Foundation

/// The record of every file the agent wrote: file name → key, size, SHA-256.
///
/// It is the ownership ledger (a file not in it is not the agent's and is never modified, moved or
/// deleted) and the stored-images index (a disk hit requires a file whose bytes hash to the recorded digest).
/// Persisted as JSON at `DIR/.emojiart-sync/manifest.json`, always replaced atomically.
public struct Manifest: Codable, Sendable, Equatable {
    /// One file the agent wrote.
    public struct Entry: Codable, Sendable, Equatable {
        public var key: String
        public var size: Int
        public var sha256: String

        public init(key: String, size: Int, sha256: String) {
            self.key = key
            self.size = size
            self.sha256 = sha256
        }
    }

    public static let currentVersion = 1

    public var version: Int = Manifest.currentVersion
    /// Keyed by file name (not key), because ownership is a property of a path.
    public var files: [String: Entry] = [:]

    public init() {}

    /// Loads the manifest at `path`. A missing file is an empty manifest. An unreadable or corrupt one is
    /// moved aside to `manifest.json.corrupt` (never deleted) and an empty manifest is returned with the
    /// reason, so the agent starts and the user can look at what was there.
    public static func load(from path: String) -> (Manifest, warning: String?) {
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

    /// Writes the manifest atomically: temporary file in `temporaryDirectory`, fsync, rename over `path`.
    public func save(to path: String, temporaryDirectory: String) async throws {
        let data: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            data = try encoder.encode(self)
        } catch {
            throw SyncError(.system, "cannot encode the manifest: \(error)")
        }
        let temporary = try await DiskStorage.writeTemporaryFile(Array(data), in: temporaryDirectory)
        if rename(temporary, path) != 0 {
            let code = errno
            unlink(temporary)
            throw SyncError.system("rename", path: path, errno: code, hint: "cannot save the manifest")
        }
    }
}
