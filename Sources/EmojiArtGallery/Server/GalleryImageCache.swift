import EmojiArtPNG
import Synchronization

/// The encoded PNGs, made lazily on first request and kept for the server's lifetime.
///
/// Painting and encoding an image takes tens of milliseconds, so nothing is made up front: a
/// server with `--count 1000` starts at once and only pays for what is asked for. Entries are
/// keyed by (N, generation); when the generation changes, the old generation's entries are
/// dropped. Two tasks asking for the same missing image may both paint it; the results are
/// identical (painting is deterministic) and the first one stored wins.
final class GalleryImageCache: Sendable {
    private struct Key: Hashable {
        var n: Int
        var generation: Int
    }

    private let entries = Mutex<[Key: [UInt8]]>([:])
    /// Which pictures are painted.
    let size: GalleryImageSize

    init(size: GalleryImageSize) {
        self.size = size
    }

    /// The PNG bytes of image N at `generation`, from the cache or freshly painted.
    func png(n: Int, generation: Int) throws(PNGEncodingError) -> [UInt8] {
        let key = Key(n: n, generation: generation)
        if let cached = entries.withLock({ $0[key] }) {
            return cached
        }
        // Paint outside the lock: other images keep being served meanwhile.
        let painted = try size.png(n: n, generation: generation)
        return entries.withLock { entries in
            if let raced = entries[key] { return raced }
            entries[key] = painted
            return painted
        }
    }

    /// How many images are painted and kept.
    var count: Int {
        entries.withLock { $0.count }
    }

    /// Drops every entry that is not of `generation` (called when the generation changes).
    func keepOnly(generation: Int) {
        entries.withLock { entries in
            entries = entries.filter { $0.key.generation == generation }
        }
    }
}
