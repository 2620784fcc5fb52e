@testable import EmojiArtSync
import Testing

/// The rules the rename gate draws from other processes' listings of DIR (`ForeignListings`), fed the records the
/// kernel gives for `rm -rf DIR` and for a program polling DIR's listing (as `strace` and the monitor saw them).
@Suite struct ForeignListingsTests {
    typealias Record = DirectoryListingMonitor.Record
    let start = ContinuousClock.now

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start.advanced(by: .milliseconds(milliseconds)) }

    /// `rm -rf` read one drain apart: its first open; its first look, close and second open merged; its listing's
    /// reads; after its deletions, its close. Shut from the first record to the close.
    @Test func rmHoldsTheGateShutFromItsOpenToItsClose() {
        var listings = ForeignListings()
        listings.take([.opened], now: at(0))
        #expect(listings.shutUntil(now: at(0), lastDeletion: nil, holdLimit: .seconds(2)) != nil)
        listings.take([.opened, .read, .closed], now: at(1))
        listings.take([.read], now: at(2))
        // Deleting for 3 s: each deletion keeps it working in DIR.
        #expect(listings.shutUntil(now: at(3000), lastDeletion: at(2990), holdLimit: .seconds(2)) != nil)
        listings.take([.closed], now: at(3001))
        #expect(listings.shutUntil(now: at(3001), lastDeletion: at(2990), holdLimit: .seconds(2)) == nil)
    }

    /// All of `rm`'s first records merged into one, then its reads: uncertain at first, then held.
    @Test func rmWhoseFirstEventsMergedIsHeldOnceItsReadsCome() {
        var listings = ForeignListings()
        let before = listings.mark
        listings.take([.opened, .read, .closed], now: at(0))
        #expect(listings.shutUntil(now: at(1), lastDeletion: nil, holdLimit: .seconds(2)) != nil)
        #expect(listings.mayHavePassedFiles(linkedSince: before))
        listings.take([.read], now: at(3))
        #expect(listings.shutUntil(now: at(200), lastDeletion: nil, holdLimit: .seconds(2)) != nil)
    }

    /// A listing that is over shuts the gate for a burst's quiet at most; a program polling DIR every 10 ms does so
    /// for `pollerRun`, then not at all. Its opens still take a turn's files back: an open and a close merged in one
    /// record may be `rm`'s first look and its real listing.
    @Test func aPollingProgramStopsShuttingTheGate() {
        var listings = ForeignListings()
        listings.take([.opened, .read, .closed], now: at(0))
        #expect(listings.shutUntil(now: at(60), lastDeletion: nil, holdLimit: .seconds(2)) == nil)
        var now = 100
        while now < 2000 {
            listings.take([.opened, .read, .closed], now: at(now))
            now += 10
        }
        let mark = listings.mark
        #expect(!listings.mayHavePassedFiles(linkedSince: mark))
        listings.take([.opened, .read, .closed], now: at(now))
        #expect(listings.shutUntil(now: at(now), lastDeletion: nil, holdLimit: .seconds(2)) == nil)
        #expect(listings.mayHavePassedFiles(linkedSince: mark))
        // A pause ends the run: the next listing is uncertain again.
        now += 1500
        listings.take([.opened, .read, .closed], now: at(now))
        #expect(listings.shutUntil(now: at(now), lastDeletion: nil, holdLimit: .seconds(2)) != nil)
    }

    /// `rm -rf` while a program polls DIR's listing: its first records, merged, look like the poller's, and no longer
    /// shut the gate; its deletions, read with them or just after, say it is `rm`: the gate is held shut, and a turn
    /// whose links they came during is taken back. Another process's lone deletion (no listing) holds nothing and takes no
    /// turn back.
    @Test func aListingFollowedByDeletionsIsRmEvenWhileAProgramPollsDIR() {
        var listings = ForeignListings()
        var now = 0
        while now < 2000 {
            listings.take([.opened, .read, .closed], now: at(now))
            now += 10
        }
        listings.take([.opened, .read, .closed], now: at(now))
        #expect(listings.shutUntil(now: at(now), lastDeletion: nil, holdLimit: .seconds(2)) == nil, "a poller's listing")
        let mark = listings.mark
        listings.take([.deleted], now: at(now + 1))
        #expect(listings.mayHavePassedFiles(linkedSince: mark), "deletions during the turn: it may be rm's")

        var merged = listings
        merged.take([.opened, .read, .closed, .deleted], now: at(now + 2))
        #expect(merged.shutUntil(now: at(now + 3), lastDeletion: nil, holdLimit: .seconds(2)) != nil, "listed and deleted")
        var held = listings
        held.take([.opened, .read, .deleted], now: at(now + 2))
        #expect(held.shutUntil(now: at(now + 1000), lastDeletion: at(now + 999), holdLimit: .seconds(2)) != nil, "rm holds DIR")
        held.take([.deleted, .closed], now: at(now + 1001))
        #expect(held.shutUntil(now: at(now + 1001), lastDeletion: at(now + 1000), holdLimit: .seconds(2)) == nil, "rm closed DIR")

        var lone = ForeignListings()
        let before = lone.mark
        lone.take([.deleted], now: at(0))
        #expect(lone.shutUntil(now: at(1), lastDeletion: nil, holdLimit: .seconds(2)) == nil)
        #expect(!lone.mayHavePassedFiles(linkedSince: before), "a person's deletion, no listing: no turn taken back")
        // Nor one long after another process's listing.
        let later = listings.mark
        listings.take([.deleted], now: at(now + 2001))
        #expect(!listings.mayHavePassedFiles(linkedSince: later))
    }

    /// A process that keeps DIR open and stops working in it holds the gate for `holdLimit`; one that keeps working
    /// in it, for `RenameGate.listingHoldCap` at most. Lost events shut it for a burst's quiet.
    @Test func aHolderHoldsTheGateForLimitedTimes() {
        var listings = ForeignListings()
        listings.take([.opened], now: at(0))
        #expect(listings.shutUntil(now: at(2100), lastDeletion: nil, holdLimit: .seconds(2)) == nil)
        var now = 0
        while now < 31_000 {
            listings.take([.read], now: at(now))
            now += 500
        }
        #expect(listings.shutUntil(now: at(now), lastDeletion: nil, holdLimit: .seconds(2)) == nil)
        var lost = ForeignListings()
        lost.take([.overflowed], now: at(0))
        #expect(lost.shutUntil(now: at(10), lastDeletion: nil, holdLimit: .seconds(2)) != nil)
        #expect(lost.shutUntil(now: at(60), lastDeletion: nil, holdLimit: .seconds(2)) == nil)
    }
}
