/// One inotify event on the watched directory (`struct inotify_event`), as a value.
///
/// Events for files inside the directory carry the file's ``name``; events on the directory itself
/// (``InotifyMask/deleteSelf``, ``InotifyMask/moveSelf``, ``InotifyMask/ignored``,
/// ``InotifyMask/unmount``) and the queue-overflow marker have `name == nil`. The kernel's watch
/// descriptor is left out: a ``DirectoryWatcher`` has exactly one watch, so it carries no information.
struct WatchEvent: Sendable, Equatable, CustomStringConvertible {
    /// What happened (`mask`).
    let mask: InotifyMask
    /// The file name inside the watched directory, without a path; `nil` for events on the directory
    /// itself and for ``InotifyMask/queueOverflow``. Decoded as UTF-8; bytes that are not valid UTF-8
    /// become U+FFFD, so such a name may not round-trip, but the event still arrives.
    let name: String?
    /// Pairs an ``InotifyMask/movedFrom`` with its ``InotifyMask/movedTo`` (same non-zero value for
    /// both halves of one `rename(2)`); 0 for every other event (`cookie`).
    let cookie: UInt32

    /// Creates an event; the watcher makes these from the kernel's records, tests may make their own.
    init(mask: InotifyMask, name: String?, cookie: UInt32 = 0) {
        self.mask = mask
        self.name = name
        self.cookie = cookie
    }

    /// The kernel dropped events (``InotifyMask/queueOverflow``): the caller must rescan the directory.
    var isOverflow: Bool { mask.contains(.queueOverflow) }

    /// This event says the watch on the directory itself is over (deleted, moved, unmounted, removed):
    /// no name, and one of ``InotifyMask/endsWatch``.
    var endsWatch: Bool { name == nil && !mask.isDisjoint(with: .endsWatch) }

    /// `create name=a.png`, `moveSelf`, `movedTo name=b.png cookie=7`, for logs and test failures.
    var description: String {
        var text = mask.description
        if let name { text += " name=\(name)" }
        if cookie != 0 { text += " cookie=\(cookie)" }
        return text
    }
}
