import CShims
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Reads, writes and removes asset files in the sync directory. Owns no memory state of its own besides
/// the layout and DIR's descriptors; its `syncDirectory` is the silo's, the rest is `nonisolated`.
///
/// Nothing here blocks the silo: temporary files are written and read on the I/O pool, and a file is put at its
/// name (`install`, or the `OwnershipGuard` when the path holds the agent's older file) on the I/O pool too, by the
/// committer, after the silo decided whose the path is. Those calls never replace what they did not decide on
/// (`linkat` and `RENAME_NOREPLACE` refuse an occupied path; the guard looks at what it took before it unlinks), so
/// whatever the silo did meanwhile is never undone.
@SyncActor
final class DiskStorage {
    /// Files larger than this are not read whole into memory (`readFile`: the legacy manifest, small state files).
    /// Asset files are never read whole: they are checked through fixed buffers, whatever their size
    /// (`CheckedFile`).
    nonisolated static let maximumFileSize = 64 * 1024 * 1024

    nonisolated let directory: SyncDirectory
    /// `lstat` as the agent's decisions see it (an error is an error, never "absent" or "someone else's").
    nonisolated let status: PathStatus
    /// Replaces and removes files at asset paths, only ever the agent's own; from the silo or the I/O pool.
    nonisolated let ownership: OwnershipGuard
    /// Holds renames into DIR while DIR is being emptied; the watcher feeds it.
    nonisolated let gate: RenameGate

    /// DIR, opened once (`O_PATH`): the warm path's `fstatat`s name files relative to it, so a DIR that was
    /// removed or replaced is never looked at through a new folder of the same name. -1 when it could not be opened
    /// (every look then goes by path).
    nonisolated let descriptor: Int32
    /// DIR opened for reading, once, for its `fsync` after each batch of renames: the flush reaches the directory
    /// the renames went into (not whatever has DIR's path by then), with no `open` and `close` per batch. -1 when
    /// it could not be opened (each flush then opens DIR by path).
    private nonisolated let flushDescriptor: Int32
    /// The state folder's `tmp/`, opened once: bodies are written into it and renamed out of it relative to it.
    nonisolated let temporaryFolder: TemporaryFolder

    nonisolated init(directory: SyncDirectory, hooks: AgentTestHooks? = nil) {
        self.directory = directory
        self.descriptor = open(directory.root, Self.openPathOnly | O_DIRECTORY | O_CLOEXEC)
        self.flushDescriptor = open(directory.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        self.temporaryFolder = TemporaryFolder(path: directory.temporaryDirectory)
        self.status = PathStatus(hooks: hooks, root: directory.root, descriptor: descriptor)
        let gate = RenameGate(
            stateProbes: [directory.lockPath, directory.indexPath],
            listingHoldLimit: hooks?.listingHoldLimit ?? RenameGate.defaultListingHoldLimit)
        hooks?.attach(gate)
        self.gate = gate
        self.ownership = OwnershipGuard(
            directory: directory, directoryDescriptor: descriptor, status: status, gate: gate, hooks: hooks)
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        if flushDescriptor >= 0 { close(flushDescriptor) }
    }

    /// `O_PATH` (Linux): a descriptor that names the directory for `*at` calls without opening it for reading.
    /// Glibc's Swift overlay does not export the macro.
    nonisolated static let openPathOnly: Int32 = 0o10000000

    /// The fingerprints of the regular files of `keys` in DIR (`fstatat` relative to its descriptor, links not
    /// followed), nil for each that is not a regular file or cannot be looked at: a hint for trusting files, never
    /// a decision (a file not trusted here is looked at again, where an error is an error). Blocking: run it on io.
    nonisolated static func fingerprints(of keys: [AssetKey], in descriptor: Int32) -> [FileFingerprint?] {
        keys.map { key in
            guard descriptor >= 0 else { return nil }
            var info = stat()
            let looked = key.withFileNameCString { name in  // the key's own bytes: no String, no copy
                try? retryingInterrupts { fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) }
            }
            return looked == nil ? nil : FileStatus(info).fingerprint  // an error: no hint, on purpose
        }
    }

    /// Reads a regular file without following a symbolic link at its path (see `openRegularFile`), whole, into
    /// memory: for small files only, `limit` bytes at most.
    nonisolated static func readFile(at path: String, limit: Int = maximumFileSize) throws(SyncError) -> [UInt8] {
        let (fd, size) = try openRegularFile(at: path)
        defer { close(fd) }
        guard size <= limit else { throw SyncError(.invalidImage, "\(path) is larger than \(limit) bytes", path: path) }
        var bytes = [UInt8](repeating: 0, count: size)
        var offset = 0
        while true {
            if offset == bytes.count { bytes.append(contentsOf: repeatElement(0, count: 4096)) }
            let count = try systemCall("read", path: path, hint: "cannot read the file") {
                bytes.withUnsafeMutableBytes { buffer in read(fd, buffer.baseAddress! + offset, buffer.count - offset) }
            }
            if count == 0 { break }
            offset += count
            if offset > limit { throw SyncError(.invalidImage, "\(path) is larger than \(limit) bytes", path: path) }
        }
        bytes.removeSubrange(offset...)
        return bytes
    }

    /// Opens a regular file for reading without following a symbolic link at its path: its descriptor (the caller
    /// closes it) and its size. Anything else is refused before it is opened (`lstat` first: opening a FIFO
    /// blocks), and `O_NONBLOCK | O_NOFOLLOW` plus `fstat` cover a swap between the two.
    nonisolated static func openRegularFile(at path: String) throws(SyncError) -> (fd: Int32, size: Int) {
        var before = stat()
        if lstat(path, &before) != 0 { throw SyncError.system("lstat", path: path, errno: errno, hint: "cannot read the file") }
        guard (before.st_mode & S_IFMT) == S_IFREG else { throw SyncError(.conflict, "\(path) is not a regular file", path: path) }
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 { throw SyncError.system("open", path: path, errno: errno, hint: "cannot read the file") }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let error = SyncError.system("fstat", path: path, errno: errno, hint: "cannot read the file")
            close(fd)
            throw error
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw SyncError(.conflict, "\(path) is not a regular file", path: path)
        }
        return (fd, Int(info.st_size))
    }

    /// `incoming-PID-RANDOM-`: taken once, so a new name costs a counter increment, not a `getpid` and a
    /// `getrandom` per file. `O_EXCL` still refuses a name that exists (a stale file of another process).
    private nonisolated static let temporaryNamePrefix = "incoming-\(getpid())-\(UInt64.random(in: 0...UInt64.max))-"
    private nonisolated static let temporaryNameCounter = Atomic<UInt64>(0)

    /// A name in `folder` no file of this process had: where a new temporary file goes.
    nonisolated static func newTemporaryPath(in folder: TemporaryFolder) -> String {
        folder.path + "/" + temporaryNamePrefix + String(temporaryNameCounter.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    /// A new, uniquely named file in `folder` (`O_EXCL`, mode 0644), open for writing: its descriptor and path. The caller closes it, and removes it unless it hands the path on.
    /// It is not flushed here: `GroupCommitter` flushes a whole batch before any of it is renamed into place.
    nonisolated static func createTemporaryFile(in folder: TemporaryFolder) throws(SyncError) -> (fd: Int32, path: String) {
        let path = newTemporaryPath(in: folder)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        if fd < 0 { throw SyncError.system("open", path: path, errno: errno, hint: "cannot create a temporary file") }
        return (fd, path)
    }

    /// Outcome of `install`.
    enum InstallResult: Sendable, Equatable {
        /// At its path; with its fingerprint there when that is known without a look (see `StagedFile.Placement`).
        case installed(fingerprint: FileFingerprint?)
        /// Something already sits at the path: nothing was changed.
        case occupied
    }

    /// Puts a staged file at the asset name if nothing is there (`renameat2(RENAME_NOREPLACE)` for a named file,
    /// `linkat` for an unnamed one), so a file that appeared at the path in the meantime (the user's) is never
    /// replaced; a file at the path is replaced only through the `OwnershipGuard`. The staged file is discarded
    /// whenever it was not installed. Blocking: the committer calls it on the I/O pool.
    nonisolated func install(_ file: StagedFile, as name: String) throws(SyncError) -> InstallResult {
        let target = directory.path(ofAsset: name)
        gate.expectOwnArrival(of: name)  // its `IN_MOVED_TO` or `IN_CREATE` is the agent's own: the watcher does not check it
        do {
            let placement = descriptor >= 0
                ? try file.placeIfAbsent(in: descriptor, as: name, shownAs: target)
                : try file.placeIfAbsent(in: AT_FDCWD, as: target, shownAs: target)
            if let placement { return .installed(fingerprint: placement.fingerprint) }
        } catch {
            gate.cancelOwnArrival(of: name)
            throw error
        }
        gate.cancelOwnArrival(of: name)
        return .occupied
    }

    /// Flushes the directory entry changes (renames, unlinks) of `DIR` and (unless told not to) of its state
    /// directory to disk, on the blocking-I/O pool (from the silo and back to it: two switches). Throws when a
    /// directory cannot be opened or flushed: then nothing may be reported durable.
    func syncDirectory(includingStateDirectory: Bool = true) async throws(SyncError) {
        let failure: SyncError? = await BlockingIO.run { [self] in
            flushDirectory(includingStateDirectory: includingStateDirectory)
        }
        if let failure { throw failure }
    }

    /// `syncDirectory` where the caller is, for a job already on the I/O pool (the committer's last links of a
    /// batch): nil, or why a directory could not be opened or flushed.
    nonisolated func flushDirectory(includingStateDirectory: Bool = true) -> SyncError? {
        let paths = includingStateDirectory ? [directory.root, directory.stateDirectory] : [directory.root]
        let injected = status.hooks?.directoryFlushError
        for (position, path) in paths.enumerated() {
            // DIR's own descriptor, kept open: `paths` starts with it.
            let fd = position == 0 && flushDescriptor >= 0 ? flushDescriptor : open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { return SyncError.system("open", path: path, errno: errno, hint: "cannot flush the directory to disk") }
            defer { if fd != flushDescriptor { close(fd) } }
            if let injected { return SyncError.system("fsync", path: path, errno: injected, hint: "cannot flush the directory to disk") }
            if fsync(fd) != 0 { return SyncError.system("fsync", path: path, errno: errno, hint: "cannot flush the directory to disk") }
        }
        return nil
    }
}
