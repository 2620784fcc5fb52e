import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The layout of a sync directory: the user's `DIR` with one file per asset, and the agent's own
/// state under `DIR/.emojiart-sync/` (index, temporary files, log, lock, status).
///
/// Temporary files live in `.emojiart-sync/tmp/`, on the same file system as `DIR`, so the final `rename(2)`
/// is atomic, and outside `DIR` itself, so a watcher on `DIR` never sees a half-written file.
public struct SyncDirectory: Sendable, Equatable {
    public static let stateDirectoryName = ".emojiart-sync"

    /// `DIR`, absolute and without a trailing slash.
    public let root: String

    public init(_ path: String) {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var trimmed = absolute
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.root = trimmed
    }

    public var stateDirectory: String { root + "/" + Self.stateDirectoryName }
    var temporaryDirectory: String { stateDirectory + "/tmp" }
    /// Where a file is held while the agent decides whether it is its own (`OwnershipGuard`): never emptied,
    /// only handed back to DIR (a crash while a person's file is held there must not lose it).
    var takenDirectory: String { stateDirectory + "/taken" }
    /// The manifest of versions before the SQLite index; imported once, then renamed `manifest.json.imported`.
    var manifestPath: String { stateDirectory + "/manifest.json" }
    var indexPath: String { stateDirectory + "/index.sqlite3" }
    /// Written when the index was last made durable (`AssetIndex.checkpoint`): its file's size and times then.
    var indexCheckpointPath: String { stateDirectory + "/index.checkpoint" }
    public var logPath: String { stateDirectory + "/sync.log" }
    public var lockPath: String { stateDirectory + "/lock" }
    public var statusPath: String { stateDirectory + "/status.json" }

    /// The path of an asset file.
    public func path(ofAsset name: String) -> String { root + "/" + name }

    /// Creates `DIR` (and missing parents) and the state directories, and proves the directory is writable.
    /// Throws a `SyncError` naming the path and the errno. Stale temporary files are removed separately,
    /// once the caller holds the directory lock (they could be another agent's work in progress otherwise).
    func prepare() throws(SyncError) {
        do {
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        } catch {
            try Self.makeDirectory(root, mode: 0o755)  // reports the errno and path precisely
        }
        try Self.makeDirectory(stateDirectory, mode: 0o755)
        try Self.makeDirectory(temporaryDirectory, mode: 0o700)
        try Self.makeDirectory(takenDirectory, mode: 0o700)
        let probe = temporaryDirectory + "/.probe-\(getpid())"
        let fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        if fd < 0 {
            let code = errno
            throw SyncError.system("open", path: probe, errno: code, hint: Self.whyNoFile(code))
        }
        close(fd)
        unlink(probe)
    }

    /// What a failed creation of a file in the sync directory means, for the error's first words: most often that
    /// the folder may not be written, but not always (a full disk, a process out of descriptors).
    static func whyNoFile(_ code: Int32) -> String {
        switch code {
        case EMFILE: "the agent may open no more files (raise its limit: ulimit -n, or LimitNOFILE= in its unit)"
        case ENFILE: "the system may open no more files (fs.file-max)"
        case ENOSPC: "the file system holding the sync directory is full"
        case EDQUOT: "the disk quota of the sync directory's owner is used up"
        default: "the sync directory is not writable"
        }
    }

    /// What `prepare` would refuse, found without creating anything (`--dry-run`): DIR or its state directory
    /// there but no directory, or one that cannot be written. Nothing there yet is fine: `prepare` would make it.
    func checkWithoutPreparing() throws(SyncError) {
        for (path, follow) in [(root, true), (stateDirectory, false)] {
            var info = stat()
            guard (follow ? stat(path, &info) : lstat(path, &info)) == 0 else {
                if errno == ENOENT { return }
                throw SyncError.system("stat", path: path, errno: errno, hint: "cannot look at the directory")
            }
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                throw SyncError(.system, "\(path) exists and is not a directory", call: "mkdir", errno: EEXIST, path: path)
            }
            if access(path, W_OK) != 0 {
                throw SyncError.system("access", path: path, errno: errno, hint: "the sync directory is not writable")
            }
        }
    }

    /// Removes everything in the temporary directory: only the agent writes there, and a file left there is
    /// a write that never got renamed into place.
    @discardableResult
    func removeStaleTemporaryFiles() -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: temporaryDirectory) else { return 0 }
        var removed = 0
        for name in names where unlink(temporaryDirectory + "/" + name) == 0 { removed += 1 }
        return removed
    }

    private static func makeDirectory(_ path: String, mode: mode_t) throws(SyncError) {
        if mkdir(path, mode) == 0 { return }
        let code = errno
        var info = stat()
        if code == EEXIST, lstat(path, &info) == 0 {
            if (info.st_mode & S_IFMT) == S_IFDIR { return }
            throw SyncError(.system, "\(path) exists and is not a directory", call: "mkdir", errno: EEXIST, path: path)
        }
        if code == ENOENT {
            throw SyncError.system("mkdir", path: path, errno: code, hint: "cannot create the directory (its parent is missing)")
        }
        throw SyncError.system("mkdir", path: path, errno: code, hint: "cannot create the directory")
    }
}
