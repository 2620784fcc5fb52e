import EmojiArtGallery
import Synchronization

/// A place a `@Sendable` logger closure can leave the last record for the test to read.
final class RecordBox: Sendable {
    private let storage = Mutex<GalleryRequestRecord?>(nil)
    func set(_ record: GalleryRequestRecord) { storage.withLock { $0 = record } }
    var value: GalleryRequestRecord? { storage.withLock { $0 } }
}
