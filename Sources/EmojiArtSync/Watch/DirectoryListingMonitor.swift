import CShims

#if canImport(Glibc)
import Glibc
#endif

/// Tells when another process opens, lists or closes DIR itself, what `rm -rf DIR` does before it deletes anything,
/// and when it deletes an entry of DIR.
///
/// inotify cannot say it: a watch on DIR reports every read of every file in DIR too, and no process. fanotify can,
/// with a mark on DIR's inode alone (no events of the files in it), which needs no privilege from Linux 5.13; the
/// agent's own opens of DIR (its descriptor, its rescans, its directory flushes) are told apart by process ID. On an
/// older kernel without `CAP_SYS_ADMIN`, or a file system without file handles, there is no monitor and the
/// `RenameGate` goes by deletions alone.
///
/// Owns the fanotify descriptor. Reads never block: the gate reads what is queued when it is asked (`drain()`).
final class DirectoryListingMonitor: Sendable {
    /// What one process did to DIR since the last drain, as one record of the kernel's: it merges a process's events
    /// on DIR while they wait to be read, so a record may hold an open, reads and a close, in an order it no longer
    /// tells (`rm -rf` opens DIR, lists a little, closes it and opens it again for its real listing, all within a
    /// few microseconds).
    struct Record: OptionSet, Sendable, Equatable {
        let rawValue: Int32
        /// DIR was opened.
        static let opened = Record(rawValue: Int32(EMOJIART_LISTING_OPEN))
        /// DIR was read (each `getdents`: a listing, or part of one).
        static let read = Record(rawValue: Int32(EMOJIART_LISTING_READ))
        /// A descriptor of DIR was closed (its last one, in the process that held it).
        static let closed = Record(rawValue: Int32(EMOJIART_LISTING_CLOSE))
        /// Events were lost (the kernel's queue was full): what happened is unknown.
        static let overflowed = Record(rawValue: Int32(EMOJIART_LISTING_OVERFLOW))
        /// An entry of DIR was deleted: `rm -rf DIR` deletes what it listed right after its listing, so this is
        /// read at the gate's own looks, with no thread between (inotify's deletions reach it through the watcher).
        static let deleted = Record(rawValue: Int32(EMOJIART_LISTING_DELETE))
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

    /// Everything queued since the last drain, in order (never blocks). A failed read counts as an overflow: unknown.
    func drain() -> [Record] {
        var records: [Record] = []
        var events = [emojiart_listing_event](repeating: emojiart_listing_event(), count: 64)
        while true {
            let count = Int(emojiart_listing_monitor_read(descriptor, ownProcess, &events, Int32(events.count)))
            guard count >= 0 else { return records + [.overflowed] }
            records += events.prefix(count).map { Record(rawValue: $0.what) }
            if count < events.count { return records }
        }
    }
}
