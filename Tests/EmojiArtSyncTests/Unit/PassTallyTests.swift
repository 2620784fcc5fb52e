@testable import EmojiArtSync
import Testing

/// A pass writes one `hit=` line per asset however often the feed lists it, counting listings by their position
/// in the feed, and keys reached without one (a repair's access) by key: either way a key's first line is
/// written and its repeats are not.
@Suite struct PassTallyTests {
    /// Counts a repeat by position alone; whether it was one.
    private func repeated(_ tally: inout PassTally, _ position: FeedPosition) -> Bool {
        tally.noteRepeat(at: position)
    }

    /// Notes an access; whether it gets a line.
    private func written(_ tally: inout PassTally, _ key: AssetKey, _ position: FeedPosition?, _ hit: Hit) -> Bool {
        tally.noteAccess(key, at: position, hit: hit)
    }

    @Test func repeatsOfAKeyAreCountedNotWrittenWhetherReachedByPositionOrByKey() throws {
        var tally = PassTally(bytesAtStart: 0)
        let one = try AssetKey(feedURL: "/gallery/image?1"), two = try AssetKey(feedURL: "/gallery/image?2")
        let feed: UInt64 = 7
        #expect(written(&tally, one, FeedPosition(0, version: feed), .disk))
        #expect(!written(&tally, one, FeedPosition(0, version: feed), .memory))
        // Reached first without a position (a repair), then listed: the listing is a repeat.
        #expect(written(&tally, two, nil, .network))
        #expect(!written(&tally, two, FeedPosition(1, version: feed), .memory))
        // A disk or network access is always written.
        #expect(written(&tally, one, FeedPosition(0, version: feed), .network))
        #expect(tally.repeats == 2)
    }

    @Test func aPositionInAnotherFeedIsCountedByKeySoNoAssetLosesItsLine() throws {
        var tally = PassTally(bytesAtStart: 0)
        let one = try AssetKey(feedURL: "/gallery/image?1"), two = try AssetKey(feedURL: "/gallery/image?2")
        #expect(written(&tally, one, FeedPosition(0, version: 1), .disk))
        // The feed was replaced during the pass: position 0 is another key now.
        #expect(written(&tally, two, FeedPosition(0, version: 2), .memory), "a key lost its only line")
        #expect(!written(&tally, two, FeedPosition(0, version: 2), .memory))
    }

    /// A repeat answered without its key (`noteRepeat`) is counted only where the pass wrote the position's line
    /// in the same feed; anywhere else nothing is counted and the access goes the ordinary way.
    @Test func aRepeatByPositionAloneCountsOnlyAPositionWhoseLineWasWritten() throws {
        var tally = PassTally(bytesAtStart: 0)
        let one = try AssetKey(feedURL: "/gallery/image?1")
        #expect(!repeated(&tally, FeedPosition(0, version: 3)), "a repeat before any line")
        #expect(written(&tally, one, FeedPosition(0, version: 3), .disk))
        #expect(repeated(&tally, FeedPosition(0, version: 3)))
        #expect(!repeated(&tally, FeedPosition(1, version: 3)), "a position never written")
        #expect(!repeated(&tally, FeedPosition(0, version: 4)), "the same position in another feed")
        #expect(tally.repeats == 1 && tally.hits.memory == 1 && tally.hits.disk == 1)
    }
}
