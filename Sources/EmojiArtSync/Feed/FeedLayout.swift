/// Where each item of a decoded feed body starts, and which items were refused (their url): what a later body
/// that differs in a few bytes can take over from this one without reading it again (`FeedDifference`).
///
/// Item `i` is the object that starts at byte `itemStarts[i]`; an item is either accepted (one listing, in order,
/// of the feed's `entryPositions`) or refused (one of its `rejections`, in order), and `refusedItems` lists the
/// refused ones' item numbers, ascending. Four bytes an item: 1.2 MB for the 300,000 items of a 100,000-key
/// feed, kept on disk with the body (`KeptFeedBody`), not in memory.
struct FeedLayout: Sendable, Equatable {
    var itemStarts: [Int32] = []
    var refusedItems: [Int32] = []

    var itemCount: Int { itemStarts.count }

    /// Whether this layout describes `feed`: one item per listing or refusal.
    func describes(_ feed: GalleryFeed) -> Bool {
        itemStarts.count == feed.entryCount + feed.rejections.count && refusedItems.count == feed.rejections.count
    }
}
