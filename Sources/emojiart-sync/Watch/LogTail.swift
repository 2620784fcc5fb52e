import EmojiArtSync
import SystemPackage

/// The last lines of a file, read from its end: at most `maximumBytes`, so the cost stays the same however
/// large the log grows (it rotates at 10 MiB). The first, possibly partial line of the chunk is dropped.
public enum LogTail {
    public static func lastLines(of path: String, maximumBytes: Int = 64 * 1024) -> [String] {
        guard let file = try? FileDescriptor.open(FilePath(path), .readOnly, options: .closeOnExec) else { return [] }
        defer { try? file.close() }
        guard let size = try? file.seek(offset: 0, from: .end) else { return [] }
        let start = max(0, size - Int64(maximumBytes))
        let bytes = (try? [UInt8](unsafeUninitializedCapacity: Int(size - start)) { buffer, count in
            count = try file.read(fromAbsoluteOffset: start, into: UnsafeMutableRawBufferPointer(buffer))
        }) ?? []
        var lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        if start > 0, !lines.isEmpty { lines.removeFirst() }
        return lines
    }
}
