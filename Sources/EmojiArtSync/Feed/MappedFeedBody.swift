#if canImport(Glibc)
import Glibc
#endif

/// A feed body that went to a file as it arrived, mapped read-only for the reader: its pages are the file's (the
/// kernel may drop and re-read them), not anonymous memory the agent holds, and the reader gives back the part it
/// has read as it goes (`release(upTo:)`), so a 36 MB feed of 100,000 items costs a few MiB of resident memory
/// while it is decoded instead of all 36.
///
/// Owns the mapping, not the file (its `StreamedBodyFile` removes it, or `KeptFeedBody` holds it). Used by one
/// decoding call on one thread; not `Sendable`.
final class MappedFeedBody {
    private let base: UnsafeRawPointer?
    let count: Int
    /// Bytes from the start already given back (page-aligned).
    private var released = 0
    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    /// Give back at least this much at a time: one `madvise` per 4 MiB read.
    private static let releaseStep = 4 * 1024 * 1024

    /// Maps the file at `path`; throws a `SyncError` naming the call that failed.
    convenience init(path: String) throws(SyncError) {
        let fd = try systemCall("open", path: path, hint: "cannot read the feed's temporary file") {
            open(path, O_RDONLY | O_CLOEXEC)
        }
        defer { close(fd) }
        var status = stat()
        _ = try systemCall("fstat", path: path, hint: "cannot read the feed's temporary file") { fstat(fd, &status) }
        try self.init(descriptor: fd, count: Int(status.st_size), path: path)
    }

    /// Maps the first `count` bytes of the file open as `descriptor` (named `path` in errors); the descriptor
    /// stays the caller's.
    init(descriptor: Int32, count: Int, path: String) throws(SyncError) {
        self.count = count
        guard count > 0 else {
            base = nil
            return
        }
        guard let mapped = mmap(nil, count, PROT_READ, MAP_PRIVATE, descriptor, 0), mapped != MAP_FAILED else {
            throw SyncError.system("mmap", path: path, errno: errno, hint: "cannot read the feed's temporary file")
        }
        base = UnsafeRawPointer(mapped)
    }

    deinit {
        if let base { munmap(UnsafeMutableRawPointer(mutating: base), count) }
    }

    /// The body's bytes, for the length of `body`.
    func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws(SyncError) -> Result) throws(SyncError) -> Result {
        try body(UnsafeBufferPointer(start: base?.assumingMemoryBound(to: UInt8.self), count: count))
    }

    /// The reader has read everything before `offset`: its pages leave the process's resident memory. Reading
    /// them again later (an error message quoting the feed) is still right: the kernel reads them from the file.
    func release(upTo offset: Int) {
        let end = min(offset, count) / Self.pageSize * Self.pageSize
        guard end - released >= Self.releaseStep else { return }
        release(released..<end)
        released = end
    }

    /// The pages wholly inside `range` leave the process's resident memory (read again from the file if needed).
    func release(_ range: Range<Int>) {
        let start = (range.lowerBound + Self.pageSize - 1) / Self.pageSize * Self.pageSize
        let end = min(range.upperBound, count) / Self.pageSize * Self.pageSize
        guard let base, end > start else { return }
        madvise(UnsafeMutableRawPointer(mutating: base + start), end - start, MADV_DONTNEED)
    }
}
