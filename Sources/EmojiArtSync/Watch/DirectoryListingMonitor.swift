import CShims

#if canImport(Glibc)
import Glibc
#endif

/// Tells when another process opens, lists or closes DIR itself: what `rm -rf DIR` does before it deletes anything.
///
/// inotify cannot say it: a watch on DIR reports every read of every file in DIR too, and no process. fanotify can,
/// with a mark on DIR's inode alone (no events of the files in it), which needs no privilege from Linux 5.13; the
/// agent's own opens of DIR (its descriptor, its rescans, its directory flushes) are told apart by process ID. On an
/// older kernel without `CAP_SYS_ADMIN`, or a file system without file handles, there is no monitor and the
/// `RenameGate` goes by deletions alone.
///
/// Owns the fanotify descriptor. Reads never block: the gate reads what is queued when it is asked (`drain()`).
final class DirectoryListingMonitor: Sendable {
    /// What other processes did to DIR since the last drain.
    struct Activity: Equatable {
        /// Opens of DIR.
        var opened = 0
        /// Reads of DIR (each `getdents`: a listing, or part of one).
        var read = 0
        /// Closes of a descriptor of DIR (its last one, in the process that held it).
        var closed = 0
        /// Events were lost (the kernel's queue was full): what happened is unknown.
        var overflowed = false

        /// Nothing happened.
        var isEmpty: Bool { opened == 0 && read == 0 && closed == 0 && !overflowed }
    }

    private let descriptor: Int32
    private let ownProcess = getpid()

    /// Starts watching the directory at `path`. Throws where fanotify cannot serve (see the type).
    init(path: String) throws(SyncError) {
        let descriptor = emojiart_listing_monitor_open(path)
        guard descriptor >= 0 else {
            throw SyncError.system("fanotify_init", path: path, errno: errno, hint: "cannot tell when another program lists the directory")
        }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Everything queued since the last drain (never blocks). A failed read counts as an overflow: unknown.
    func drain() -> Activity {
        var activity = Activity()
        var events = [emojiart_listing_event](repeating: emojiart_listing_event(), count: 64)
        while true {
            let count = Int(emojiart_listing_monitor_read(descriptor, ownProcess, &events, Int32(events.count)))
            guard count >= 0 else {
                activity.overflowed = true
                return activity
            }
            for event in events.prefix(count) {
                switch Int(event.kind) {
                case EMOJIART_LISTING_OPEN: activity.opened += 1
                case EMOJIART_LISTING_READ: activity.read += 1
                case EMOJIART_LISTING_CLOSE: activity.closed += 1
                default: activity.overflowed = true
                }
            }
            if count < events.count { return activity }
        }
    }
}
