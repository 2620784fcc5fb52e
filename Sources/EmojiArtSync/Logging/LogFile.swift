#if canImport(Glibc)
import Glibc
#endif

/// The log file: its descriptor, size and inode, rotation by size, and following an outside rotation.
///
/// Used by one thread at a time: the log writer's thread, or a caller holding the sink's lock once that
/// thread has stopped. Rotation: when the file would pass `rotation.maxBytes` it is renamed to `.1` (older ones
/// shift up to `.N`, `rotation.keep` kept, the oldest dropped) and a new file is opened; a file is only ever cut
/// between lines, and a line longer than the limit goes whole into a file of its own. If an outside tool
/// (logrotate) moves or deletes the file, the next write at least a second after the last check notices (the
/// path no longer names the open inode) and reopens the path.
///
/// Rotation renames nothing but regular files: the path itself only while it is still the regular file being
/// written (checked with `lstat`, so a symbolic link is never followed to its name), and each `.N` only when it
/// is a regular file. A path that is a symbolic link, or names no regular file (`/dev/stdout`, a FIFO), is
/// written through and never rotated: the link, and what it points at, are someone else's to rotate.
struct LogFile: Sendable {
    let path: String
    let rotation: LogSink.Rotation
    private var fileDescriptor: Int32 = -1
    private var size = 0
    private var inode: ino_t = 0
    private var lastCheck: ContinuousClock.Instant = .now
    /// The path is a regular file of its own (not a symbolic link, not a device): it may be renamed.
    private(set) var rotates = true

    /// Opens (creating when needed, mode 0644) `path` for appending.
    init(path: String, rotation: LogSink.Rotation) throws(SyncError) {
        self.path = path
        self.rotation = rotation
        try open()
    }

    /// Appends `bytes`, whole lines each ending in a newline, rotating between lines as needed.
    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        checkOutsideRotation()
        var rest = bytes[...]
        while !rest.isEmpty {
            let room = rotation.maxBytes - size
            if rest.count <= room || !rotates {
                append(rest)
                return
            }
            // The whole lines that still fit; none (a long line or a full file): rotate, or write one line
            // whole into the fresh file.
            var cut = rest.startIndex
            if room > 0, let newline = rest.prefix(room).lastIndex(of: 0x0A) { cut = newline + 1 }
            if cut == rest.startIndex && size == 0 {
                cut = (rest.firstIndex(of: 0x0A) ?? rest.endIndex - 1) + 1
            }
            append(rest[..<cut])
            rest = rest[cut...]
            if !rest.isEmpty { rotate() }
        }
    }

    private mutating func append(_ bytes: Slice<UnsafeRawBufferPointer>) {
        guard fileDescriptor >= 0, !bytes.isEmpty else { return }
        LogSink.writeAll(fileDescriptor, UnsafeRawBufferPointer(rebasing: bytes))
        size += bytes.count
    }

    /// Closes and reopens the path (after an outside rotation; `SIGHUP` asks for this).
    mutating func reopen() {
        close()
        try? open()
    }

    mutating func close() {
        if fileDescriptor >= 0 { Glibc.close(fileDescriptor) }
        fileDescriptor = -1
        size = 0  // no file, nothing in it: a path that cannot be reopened drops lines instead of looping
    }

    /// At most once a second: reopens the path when it no longer names the open file.
    private mutating func checkOutsideRotation() {
        let now = ContinuousClock.now
        guard lastCheck.duration(to: now) >= .seconds(1) else { return }
        lastCheck = now
        var info = stat()
        if stat(path, &info) != 0 || info.st_ino != inode { reopen() }
    }

    private mutating func rotate() {
        let current = inode
        close()
        // The path must still be the regular file just written; else it is not this file's to rename.
        if Self.isRegularFile("\(path)", inode: current) {
            let oldest = "\(path).\(rotation.keep)"
            if Self.isRegularFile(oldest) { unlink(oldest) }
            for index in stride(from: rotation.keep - 1, through: 1, by: -1) where Self.isRegularFile("\(path).\(index)") {
                Glibc.rename("\(path).\(index)", "\(path).\(index + 1)")
            }
            Glibc.rename(path, "\(path).1")
        }
        try? open()
    }

    /// Whether `path` names a regular file itself (`lstat`: a symbolic link is not one), with `inode` when given.
    private static func isRegularFile(_ path: String, inode: ino_t? = nil) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        return inode.map { $0 == info.st_ino } ?? true
    }

    private mutating func open() throws(SyncError) {
        let fd = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        if fd < 0 {
            throw SyncError.system("open", path: path, errno: errno, hint: "cannot open the log file")
        }
        var info = stat()
        fstat(fd, &info)
        fileDescriptor = fd
        size = Int(info.st_size)
        inode = info.st_ino
        rotates = Self.isRegularFile(path, inode: info.st_ino)
        lastCheck = .now
    }
}
