import Foundation

/// The last lines of a file, read from its end: at most `maximumBytes`, so the cost stays the same however
/// large the log grows (it rotates at 10 MiB). The first, possibly partial line of the chunk is dropped.
public enum LogTail {
    public static func lastLines(of path: String, maximumBytes: Int = 64 * 1024) -> [String] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        guard let size = try? handle.seekToEnd() else { return [] }
        let start = size > UInt64(maximumBytes) ? size - UInt64(maximumBytes) : 0
        guard (try? handle.seek(toOffset: start)) != nil, let data = try? handle.readToEnd() else { return [] }
        var lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        if start > 0, !lines.isEmpty { lines.removeFirst() }
        return lines
    }
}
