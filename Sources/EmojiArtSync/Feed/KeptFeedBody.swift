#if canImport(Glibc)
import Glibc
#endif

/// The last feed body the agent decoded and its layout (`FeedLayout`), kept for the next decode to compare with
/// (`FeedDifference`): the body's temporary file, opened before its name is removed, so that the file has no name
/// and only this process holds it. Nothing else can write to it, which is what lets the next decode trust that
/// the bytes it compares are the ones the kept feed was read from. The layout is written after the body (four
/// bytes an item), so neither costs resident memory between polls; the disk space (the body's size, 36 MB at
/// 100,000 items) is given back when the next body replaces this one or the agent stops.
final class KeptFeedBody: Sendable {
    private let descriptor: Int32
    /// The body's bytes come first in the file, then the layout's item starts, then its refused items.
    let bodySize: Int
    private let itemCount: Int
    private let refusedCount: Int
    /// The file's path when it was kept, for error messages (the name is gone by now).
    private let path: String
    /// Whether this body was decoded as its difference from the one kept before it (the poll's `body=difference`).
    let decodedAsDifference: Bool

    private init(
        descriptor: Int32, bodySize: Int, itemCount: Int, refusedCount: Int, path: String, decodedAsDifference: Bool
    ) {
        self.decodedAsDifference = decodedAsDifference
        self.descriptor = descriptor
        self.bodySize = bodySize
        self.itemCount = itemCount
        self.refusedCount = refusedCount
        self.path = path
    }

    deinit {
        close(descriptor)
    }

    /// Keeps the body in the file open as `descriptor`, read and write (its first `bodySize` bytes; named `path` in
    /// messages, a name its writer removes later), with `layout` appended. The descriptor stays the caller's (this
    /// keeps a copy). Throws when the file cannot be written (a full disk): the next feed is then read whole.
    static func keep(
        descriptor: Int32, path: String, bodySize: Int, layout: FeedLayout, decodedAsDifference: Bool = false
    ) throws(SyncError) -> KeptFeedBody {
        let hint = "cannot keep the feed's body for the next poll"
        let fd = try systemCall("dup", path: path, hint: hint) { fcntl(descriptor, F_DUPFD_CLOEXEC, 0) }
        do throws(SyncError) {
            var status = stat()
            _ = try systemCall("fstat", path: path, hint: hint) { fstat(fd, &status) }
            guard Int(status.st_size) == bodySize else {
                throw SyncError(.system, "\(hint): \(path) is \(status.st_size) bytes, not the \(bodySize) decoded", path: path)
            }
            _ = try systemCall("lseek", path: path, hint: hint) { lseek(fd, off_t(bodySize), SEEK_SET) }
            for table in [layout.itemStarts, layout.refusedItems] {
                let failure = table.withUnsafeBytes { bytes -> SystemCallFailure? in
                    do throws(SystemCallFailure) {
                        try writeFully(fd, bytes)
                        return nil
                    } catch {
                        return error
                    }
                }
                if let failure { throw SyncError.system("write", path: path, errno: failure.errno, hint: hint) }
            }
            return KeptFeedBody(
                descriptor: fd, bodySize: bodySize, itemCount: layout.itemCount, refusedCount: layout.refusedItems.count,
                path: path, decodedAsDifference: decodedAsDifference)
        } catch {
            close(fd)
            throw error
        }
    }

    /// The layout written with the body.
    func layout() throws(SyncError) -> FeedLayout {
        var layout = FeedLayout()
        layout.itemStarts = try table(count: itemCount, at: bodySize)
        layout.refusedItems = try table(count: refusedCount, at: bodySize + 4 * itemCount)
        return layout
    }

    private func table(count: Int, at offset: Int) throws(SyncError) -> [Int32] {
        var table = [Int32](repeating: 0, count: count)
        var done = 0
        let size = 4 * count
        while done < size {
            let read = table.withUnsafeMutableBytes { bytes in
                pread(descriptor, bytes.baseAddress! + done, size - done, off_t(offset + done))
            }
            if read < 0 && errno == EINTR { continue }
            if read < 0 { throw SyncError.system("pread", path: path, errno: errno, hint: "cannot read the kept feed body") }
            guard read > 0 else {
                throw SyncError(.system, "cannot read the kept feed body: \(path) ends early", path: path)
            }
            done += read
        }
        return table
    }

    /// The body mapped read-only.
    func mapBody() throws(SyncError) -> MappedFeedBody {
        try MappedFeedBody(descriptor: descriptor, count: bodySize, path: path)
    }
}
