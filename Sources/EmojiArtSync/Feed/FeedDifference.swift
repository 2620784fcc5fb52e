#if canImport(Glibc)
import Glibc
#endif

/// Decodes a changed feed body as its difference from the last one (`KeptFeedBody`), so that a feed whose gallery
/// changed one item costs the comparison of two bodies and the reading of that item, not a decode of the whole
/// body (36 MB and 300,000 items at 100,000 keys): cost follows change, as the man page promises.
///
/// The two bodies are compared from the start and from the end. The items of the last body that lie wholly in the
/// common start are the new body's first items, byte for byte; the reader (`FeedReader.readRun`) reads from the
/// first item that is not, and stops at the first item start that lies in the common end and was an item start of
/// the last body: from there to the end both bodies are the same bytes in the same grammatical state, so they
/// read alike. Only the keys' positions and tags are worked out again over all items (four bytes an item), since
/// a key's position is the order of its first listing and its tag is that listing's checksum.
///
/// The outcome is exactly what reading the whole body gives (the same keys, positions, tags, refusals and
/// layout; `FeedDifferenceTests` compares them on random edits). Whenever that could not be certain, or would
/// not pay, the answer is nil and the caller reads the whole body: a body that does not read (its error is the
/// whole read's to report), a change spanning more than half the body, a kept layout that does not describe the
/// kept feed.
enum FeedDifference {
    /// The last feed decoded and the body it was decoded from.
    struct Previous: Sendable {
        let feed: GalleryFeed
        let body: KeptFeedBody
    }

    /// Smaller bodies are read whole: their decode costs less than the comparison's setup.
    static let minimumBodySize = 256 * 1024
    /// Compared and given back (`MappedFeedBody.release`) this much at a time, so that comparing two 36 MB
    /// bodies does not make them resident.
    private static let chunk = 1 << 20

    /// What comparing a body with the kept one found.
    enum Outcome {
        /// The same bytes: the kept feed is this body's (no digest is needed to tell).
        case sameBytes
        /// The feed the body holds and its layout.
        case decoded(feed: GalleryFeed, layout: FeedLayout)
    }

    /// The feed `body` holds and its layout, given that `kept` holds the body `previous` was decoded from; nil
    /// when the caller should read the whole body instead (see the type's comment).
    static func decode(
        _ body: MappedFeedBody, previous: GalleryFeed, kept: KeptFeedBody, maximumUniqueAssets: Int
    ) throws(SyncError) -> Outcome? {
        guard body.count >= minimumBodySize, kept.bodySize >= minimumBodySize else { return nil }
        let oldLayout = try kept.layout()
        guard oldLayout.describes(previous), oldLayout.itemCount > 0 else { return nil }
        let old = try kept.mapBody()
        return try old.withBytes { oldBytes throws(SyncError) in
            try body.withBytes { newBytes throws(SyncError) in
                let prefix = commonPrefix(oldBytes, newBytes, old: old, new: body)
                if prefix == oldBytes.count && prefix == newBytes.count { return .sameBytes }
                let suffix = commonSuffix(oldBytes, newBytes, limit: min(oldBytes.count, newBytes.count) - prefix, old: old, new: body)
                return difference(
                    newBytes, previous: previous, oldLayout: oldLayout, oldCount: oldBytes.count, prefix: prefix,
                    suffix: suffix, maximumUniqueAssets: maximumUniqueAssets
                ).map { .decoded(feed: $0.feed, layout: $0.layout) }
            }
        }
    }

    private static func difference(
        _ bytes: UnsafeBufferPointer<UInt8>, previous: GalleryFeed, oldLayout: FeedLayout, oldCount: Int, prefix: Int,
        suffix: Int, maximumUniqueAssets: Int
    ) -> (feed: GalleryFeed, layout: FeedLayout)? {
        let oldStarts = oldLayout.itemStarts
        // Items before `first` lie wholly in the common start, each with the separator after it: the first item
        // read is the last one that starts in it (the bytes before an item start are the array's opening and the
        // items before, the same in both bodies).
        let first = oldStarts.partitioningIndex { Int($0) > prefix } - 1
        guard first >= 0 else { return nil }
        let shift = bytes.count - oldCount
        let sameFrom = bytes.count - suffix
        guard sameFrom - Int(oldStarts[first]) <= bytes.count / 2 else { return nil }
        let read: (run: GalleryFeed, layout: FeedLayout, resumedAt: Int?)
        do throws(FeedSyntaxError) {
            read = try FeedReader.readRun(
                bytes, fromItem: first, at: Int(oldStarts[first]), expectedBytes: sameFrom - Int(oldStarts[first]),
                maximumUniqueAssets: maximumUniqueAssets
            ) { start in
                start >= sameFrom && oldStarts.index(of: Int32(start - shift), from: first) != nil
            }
        } catch {
            return nil
        }
        let resumed = read.resumedAt.map { oldStarts.index(of: Int32($0 - shift), from: first)! } ?? oldStarts.count
        var merge = Merge(previous: previous, capacity: previous.entryCount)
        var oldItem = OldItemWalk(previous: previous, layout: oldLayout)
        for item in 0..<first { merge.reuse(oldItem.next(), start: oldStarts[item], in: bytes) }
        for _ in first..<resumed { _ = oldItem.next() }
        merge.add(read.run, layout: read.layout, in: bytes)
        for item in resumed..<oldStarts.count {
            merge.reuse(oldItem.next(), start: oldStarts[item] + Int32(shift), in: bytes)
        }
        guard !merge.failed, merge.keys.count <= maximumUniqueAssets else { return nil }
        let items: FeedState
        do {
            items = try FeedState(distinctKeys: merge.keys, tags: merge.tags)
        } catch {
            assertionFailure("the difference listed \(error.key) twice among a feed's distinct keys")
            return nil
        }
        let feed = GalleryFeed(entryPositions: merge.entries, items: items, rejections: merge.rejections)
        return (feed, merge.layout)
    }

    /// One item of the last body, walked in order: its listing's position and whether it was its key's first
    /// listing, or its refusal.
    private enum OldItem {
        case listing(position: Int32, first: Bool)
        case refused(AssetKey.Rejection)
    }

    private struct OldItemWalk {
        let previous: GalleryFeed
        let refused: [Int32]
        var item = 0, entry = 0, refusal = 0
        /// Positions are given in order of first listing: a listing is its key's first when its position is the
        /// next one not given yet.
        var positionsGiven: Int32 = 0

        init(previous: GalleryFeed, layout: FeedLayout) {
            self.previous = previous
            refused = layout.refusedItems
        }

        mutating func next() -> OldItem {
            defer { item += 1 }
            if refusal < refused.count, refused[refusal] == item {
                refusal += 1
                return .refused(previous.rejections[refusal - 1])
            }
            let position = previous.entryPositions[entry]
            entry += 1
            let first = position == positionsGiven
            if first { positionsGiven += 1 }
            return .listing(position: position, first: first)
        }
    }

    /// The new feed, item by item, as `FeedReader` would have built it.
    private struct Merge {
        let previous: GalleryFeed
        var keys: [AssetKey] = []
        var tags: [FeedTag?] = []
        var entries: [Int32] = []
        var rejections: [AssetKey.Rejection] = []
        var layout = FeedLayout()
        /// For each key of the last feed, its position in the new one, or -1 before it is listed.
        var positionOfPrevious: [Int32]
        /// A reused listing whose tag had to be read again could not be: never expected, the bytes read before.
        var failed = false

        init(previous: GalleryFeed, capacity: Int) {
            self.previous = previous
            positionOfPrevious = Array(repeating: -1, count: previous.items.count)
            entries.reserveCapacity(capacity)
            layout.itemStarts.reserveCapacity(capacity)
            keys.reserveCapacity(previous.items.count)
            tags.reserveCapacity(previous.items.count)
        }

        /// An item of the last body, now at `start` of `bytes`.
        mutating func reuse(_ item: OldItem, start: Int32, in bytes: UnsafeBufferPointer<UInt8>) {
            switch item {
            case .refused(let rejection):
                refuse(rejection, start: start)
            case .listing(let position, let first):
                guard positionOfPrevious[Int(position)] < 0 || first else {
                    list(previous: Int(position), start: start, tag: nil)
                    return
                }
                // Its key's first listing now. Its checksum is the tag kept when it was the first then too; when
                // not, the tag kept is another listing's, and this item's is read again.
                if first {
                    list(previous: Int(position), start: start, tag: previous.items.tags[Int(position)])
                } else if let tag = Self.tag(ofItemAt: Int(start), in: bytes) {
                    list(previous: Int(position), start: start, tag: tag)
                } else {
                    failed = true
                }
            }
        }

        /// The items read from the new body (`run`, whose positions are its own).
        mutating func add(_ run: GalleryFeed, layout runLayout: FeedLayout, in bytes: UnsafeBufferPointer<UInt8>) {
            var positionOfRunKey = [Int32](repeating: -1, count: run.items.count)
            var entry = 0, refusal = 0
            for (item, start) in runLayout.itemStarts.enumerated() {
                if refusal < runLayout.refusedItems.count, runLayout.refusedItems[refusal] == item {
                    refuse(run.rejections[refusal], start: start)
                    refusal += 1
                    continue
                }
                let runPosition = Int(run.entryPositions[entry])
                entry += 1
                let key = run.items.keys[runPosition]
                // The run's tag for a key is its first listing's in the run, which is its first in the new feed
                // whenever the key is new here (an earlier listing would have placed it).
                let tag = run.items.tags[runPosition]
                if let known = previous.items.position(of: key) {
                    list(previous: known, start: start, tag: tag)
                } else {
                    if positionOfRunKey[runPosition] < 0 {
                        positionOfRunKey[runPosition] = Int32(keys.count)
                        keys.append(key)
                        tags.append(tag)
                    }
                    entries.append(positionOfRunKey[runPosition])
                    layout.itemStarts.append(start)
                }
            }
        }

        /// A listing of the last feed's key at `position`, whose checksum is `tag` (used if it is its first listing).
        private mutating func list(previous position: Int, start: Int32, tag: FeedTag?) {
            if positionOfPrevious[position] < 0 {
                positionOfPrevious[position] = Int32(keys.count)
                keys.append(previous.items.keys[position])
                tags.append(tag)
            }
            entries.append(positionOfPrevious[position])
            layout.itemStarts.append(start)
        }

        private mutating func refuse(_ rejection: AssetKey.Rejection, start: Int32) {
            layout.refusedItems.append(Int32(layout.itemStarts.count))
            layout.itemStarts.append(start)
            rejections.append(rejection)
        }

        /// The checksum of the listing at `start`, read again; nil if it does not read as a listing, which it did
        /// before (the reader keeps a tag for every listing).
        private static func tag(ofItemAt start: Int, in bytes: UnsafeBufferPointer<UInt8>) -> FeedTag? {
            let read = try? FeedReader.readRun(bytes, fromItem: 0, at: start, maximumUniqueAssets: 1) { _ in true }
            return read?.run.items.tags.first ?? nil
        }
    }

    // MARK: - Comparing

    /// How many bytes `old` and `new` have in common from the start; each megabyte compared is given back.
    private static func commonPrefix(
        _ old: UnsafeBufferPointer<UInt8>, _ new: UnsafeBufferPointer<UInt8>, old oldBody: MappedFeedBody,
        new newBody: MappedFeedBody
    ) -> Int {
        let limit = min(old.count, new.count)
        var at = 0
        while at < limit {
            let count = min(chunk, limit - at)
            defer {
                oldBody.release(at..<at + count)
                newBody.release(at..<at + count)
            }
            if memcmp(old.baseAddress! + at, new.baseAddress! + at, count) != 0 {
                var same = at
                while old[same] == new[same] { same += 1 }
                return same
            }
            at += count
        }
        return limit
    }

    /// How many bytes `old` and `new` have in common at the end, at most `limit`; each megabyte compared is given
    /// back.
    private static func commonSuffix(
        _ old: UnsafeBufferPointer<UInt8>, _ new: UnsafeBufferPointer<UInt8>, limit: Int, old oldBody: MappedFeedBody,
        new newBody: MappedFeedBody
    ) -> Int {
        var same = 0
        while same < limit {
            let count = min(chunk, limit - same)
            let oldStart = old.count - same - count, newStart = new.count - same - count
            defer {
                oldBody.release(oldStart..<oldStart + count)
                newBody.release(newStart..<newStart + count)
            }
            if memcmp(old.baseAddress! + oldStart, new.baseAddress! + newStart, count) != 0 {
                var back = same
                while old[old.count - 1 - back] == new[new.count - 1 - back] { back += 1 }
                return back
            }
            same += count
        }
        return limit
    }
}

extension RandomAccessCollection where Element == Int32, Index == Int {
    /// The first index whose element satisfies `isAbove`, the elements being sorted so that it holds from some
    /// index on (`endIndex` if none).
    fileprivate func partitioningIndex(where isAbove: (Int32) -> Bool) -> Int {
        var low = startIndex, high = endIndex
        while low < high {
            let middle = (low + high) / 2
            if isAbove(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}

extension [Int32] {
    /// The index of `value` at or after `from` in this ascending array, if it is there.
    fileprivate func index(of value: Int32, from: Int) -> Int? {
        let found = self[from...].partitioningIndex { $0 >= value }
        return found < count && self[found] == value ? found : nil
    }
}
