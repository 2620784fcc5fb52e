@testable import EmojiArtSync
import TestSupport
import Testing

/// What shuts the gate that holds renames into DIR: a person's deletions only, for a time that depends on the
/// burst, and DIR or its state directory going for good. The agent's own renames and removals never do.
@Suite struct RenameGateTests {
    @Test func theAgentsOwnRenamesAndAnnouncedRemovalsLeaveItOpen() async {
        let gate = RenameGate()
        gate.startWatching()
        gate.expectOwnRemoval(of: "gallery_image_2.png")
        gate.note([
            WatchEvent(mask: .movedTo, name: "gallery_image_1.png", cookie: 1),
            WatchEvent(mask: .closeWrite, name: "notes.txt"),
            WatchEvent(mask: .create, name: "mine.png"),
            WatchEvent(mask: .movedFrom, name: "gallery_image_2.png", cookie: 2),
        ])
        #expect(gate.shutUntil == nil)
        #expect(await gate.waitUntilOpen() == nil)
        // The announcement was used up: the same name deleted again is a person's deletion.
        gate.note([WatchEvent(mask: .delete, name: "gallery_image_2.png")])
        #expect(gate.shutUntil != nil)
    }

    /// The agent's own renames into DIR are announced and left out of what the watcher acts on, once each: a
    /// person's rename onto the same name afterwards, or an arrival never announced, is acted on.
    @Test func theAgentsOwnArrivalsAreLeftOutOfWhatTheWatcherActsOn() {
        let gate = RenameGate()
        gate.startWatching()
        gate.expectOwnArrival(of: "gallery_image_1.png")
        gate.expectOwnArrival(of: "gallery_image_3.png")
        gate.cancelOwnArrival(of: "gallery_image_3.png")  // its rename failed
        let acted = gate.note([
            WatchEvent(mask: .movedTo, name: "gallery_image_1.png", cookie: 1),
            WatchEvent(mask: .movedTo, name: "gallery_image_1.png", cookie: 2),
            WatchEvent(mask: .movedTo, name: "gallery_image_2.png", cookie: 3),
            WatchEvent(mask: .movedTo, name: "gallery_image_3.png", cookie: 4),
            WatchEvent(mask: .closeWrite, name: "gallery_image_1.png"),
        ])
        #expect(acted.map(\.cookie) == [2, 3, 4, 0])
        #expect(gate.shutUntil == nil)
        // A file with no name linked into DIR arrives as a creation: left out the same way, once.
        gate.expectOwnArrival(of: "gallery_image_5.png")
        let linked = gate.note([
            WatchEvent(mask: .create, name: "gallery_image_5.png"),
            WatchEvent(mask: .create, name: "gallery_image_5.png"),
        ])
        #expect(linked.count == 1)
        // Lost events (an overflow) drop the announcements: they cannot swallow a later event.
        gate.expectOwnArrival(of: "gallery_image_4.png")
        gate.note([WatchEvent(mask: .queueOverflow, name: nil)])
        #expect(gate.note([WatchEvent(mask: .movedTo, name: "gallery_image_4.png", cookie: 5)]).count == 1)
    }

    @Test func aLoneDeletionShutsItBrieflyAndABurstForLonger() async {
        let gate = RenameGate()
        let before = ContinuousClock.now
        gate.note([WatchEvent(mask: .delete, name: "gallery_image_1.png")])
        #expect(gate.shutUntil.map { $0 <= ContinuousClock.now.advanced(by: RenameGate.loneQuiet) && $0 > before } == true)
        #expect(await gate.waitUntilOpen() == nil)
        // `rm -rf`: entries deleted microseconds apart (one read of inotify).
        gate.note([WatchEvent(mask: .delete, name: "gallery_image_2.png"), WatchEvent(mask: .delete, name: "gallery_image_3.png")])
        let afterBurst = ContinuousClock.now
        #expect(gate.shutUntil.map { $0 > afterBurst.advanced(by: RenameGate.loneQuiet) } == true)
    }

    @Test func theStateDirectoryOrDIRGoingShutsItForGood() async {
        let stateDirectory = RenameGate()
        stateDirectory.note([WatchEvent(mask: [.delete, .isDirectory], name: ".emojiart-sync")])
        #expect(await stateDirectory.waitUntilOpen() != nil)
        let dir = RenameGate()
        dir.note([WatchEvent(mask: .deleteSelf, name: nil)])
        #expect(await dir.waitUntilOpen() != nil)
    }

    /// A stopping agent's task is cancelled; what it was about to make could still trip `rm`, so it waits for the gate
    /// too, asleep between looks. Before, its cancelled sleep returned at once and it spun on the gate's lock until the
    /// gate opened (20 looks in microseconds; held shut by a test, forever).
    @Test func aCancelledWaiterWaitsAsleepNotSpinning() async {
        let gate = RenameGate()
        gate.holdShut(true)
        let started = ContinuousClock.now
        let waiter = Task { await gate.waitUntilOpen() }
        waiter.cancel()
        #expect(await eventually { gate.looks >= 5 })
        // A held gate is looked at again 2 ms after each look, at the earliest: at most one look per 2 ms however
        // slow or fast the machine (the spinning waiter made thousands a millisecond).
        let looks = gate.looks
        let elapsed = ContinuousClock.now - started
        #expect(Double(looks) <= elapsed / .milliseconds(2) + 1, "\(looks) looks in \(elapsed)")
        #expect(gate.waiters == 1)
        gate.holdShut(false)
        #expect(await waiter.value == nil, "the gate opened, and the cancelled waiter was told so")
    }
}
