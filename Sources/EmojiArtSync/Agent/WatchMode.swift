import Synchronization

/// How DIR is watched now: with inotify, or, when inotify cannot be used, by rescans at
/// `fallbackRescanInterval`. The watch service sets it, the schedule service rescans while it says `polling`,
/// and `status` shows it (`watching`).
///
/// Lock: written by one loop, read by others.
final class WatchMode: Sendable {
    enum Mode: String, Sendable {
        case inotify, polling
    }

    private let mode = Mutex(Mode.inotify)

    var current: Mode { mode.withLock { $0 } }

    func set(_ new: Mode) {
        mode.withLock { $0 = new }
    }
}
