import EmojiArtPNG
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Writes a gallery as static files that a stock web server (nginx, `python3 -m http.server`)
/// can serve: what `emojiart-gallery export` does, for benchmarks at scale.
///
/// Layout under the output directory:
/// - `gallery/images`: the feed, the same JSON as `GET /gallery/images` (every item three times,
///   shuffled once, fresh random checksums), with each `url` set to `baseURL + "/gallery/image/N.png"`;
/// - `gallery/image/N.png`: image N for N = 1...count, the gallery's 360x650 PNG or, with
///   ``small``, a 16x16 one; error items (N % 10 == 0) hold the book's `{"error": "File not
///   found."}`, which a static server sends with status 200 as the book's server does.
///
/// What a static server cannot keep: the shuffle on every request, the answer for N out of range
/// (a static server says 404), and the fault injection.
public struct GalleryExport: Sendable {
    /// Number of items, N = 1...count.
    public var count: Int
    /// 16x16 images instead of 360x650 ones.
    public var small: Bool
    /// Put before each image path in the feed's urls: empty (the default) gives `/gallery/image/N.png`,
    /// a path on the server that serves the feed, which is all `emojiart-sync` accepts.
    public var baseURL: String

    /// Creates an export description.
    public init(count: Int, small: Bool = false, baseURL: String = "") {
        self.count = count
        self.small = small
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
    }

    /// The url of image N in the exported feed.
    public func url(of n: Int) -> String { "\(baseURL)/gallery/image/\(n).png" }

    /// The bytes of image N as exported.
    public func imageBytes(_ n: Int) throws -> [UInt8] {
        if GalleryCatalog.isErrorItem(n, count: count) { return GalleryResponder.notFoundBytes }
        return try (small ? GalleryImageSize.small : .full).png(n: n, generation: 0)
    }

    /// The feed as exported: the catalog's items with the static urls, three times, shuffled.
    public func feedBytes() throws -> [UInt8] {
        let items = GalleryCatalog(count: count).items.enumerated().map { index, item in
            GalleryItem(name: item.name, url: url(of: index + 1), price: item.price, checksum: item.checksum)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode((items + items + items).shuffled()))
    }

    /// Writes everything under `directory` (created if missing; existing files are replaced),
    /// painting images on all cores. Returns the number of files written.
    @discardableResult
    public func write(to directory: String) async throws -> Int {
        let imageDirectory = directory + "/gallery/image"
        try FileManager.default.createDirectory(atPath: imageDirectory, withIntermediateDirectories: true)
        let workers = max(1, ProcessInfo.processInfo.activeProcessorCount)
        let export = self
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var n = worker + 1
                    while n <= export.count {
                        try Task.checkCancellation()
                        try Self.write(try export.imageBytes(n), to: "\(imageDirectory)/\(n).png")
                        n += workers
                    }
                }
            }
            try await group.waitForAll()
        }
        try Self.write(try feedBytes(), to: directory + "/gallery/images")
        return count + 1
    }

    /// Writes `bytes` to `path` through a temporary name and a rename, so a server never serves half a file.
    private static func write(_ bytes: [UInt8], to path: String) throws {
        let temporary = path + ".tmp"
        try Data(bytes).write(to: URL(fileURLWithPath: temporary))
        if rename(temporary, path) != 0 {
            let reason = String(cString: strerror(errno))
            throw GalleryExportError(message: "cannot rename \(temporary) to \(path): \(reason)")
        }
    }
}

/// Why an export could not write a file: the path and what the system said.
public struct GalleryExportError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, naming the path.
    public var message: String
    public var description: String { message }
}
