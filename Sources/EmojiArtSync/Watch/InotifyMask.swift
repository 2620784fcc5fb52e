#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The bits of an inotify event mask (`uint32_t mask` in `struct inotify_event`, and the mask passed
/// to `inotify_add_watch`), with English names. Each member's doc comment gives the C name from
/// `<sys/inotify.h>`.
///
/// The same type describes both what a watch asks for (``DirectoryWatcher/watchMask``) and what an
/// event reports (``WatchEvent/mask``); some bits only make sense in one of the two places, as noted.
/// The raw values come straight from the C constants, so an unnamed bit the kernel sets in the future
/// survives in ``rawValue``.
struct InotifyMask: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The C bit pattern.
    let rawValue: UInt32

    /// Creates a mask from a C bit pattern.
    init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    // MARK: Events

    /// A file was read. The corresponding C constant is `IN_ACCESS`.
    static let access = InotifyMask(rawValue: UInt32(truncatingIfNeeded: IN_ACCESS))
    /// A file's contents changed (`write`, `truncate`, `open` with `O_TRUNC`).
    /// The corresponding C constant is `IN_MODIFY`.
    static let modify = InotifyMask(rawValue: UInt32(truncatingIfNeeded: IN_MODIFY))
    /// Metadata changed: permissions, owner, timestamps, link count, extended attributes.
    /// The corresponding C constant is `IN_ATTRIB`.
    static let attrib = InotifyMask(rawValue: UInt32(truncatingIfNeeded: IN_ATTRIB))
    /// A file opened for writing was closed. The corresponding C constant is `IN_CLOSE_WRITE`.
    static let closeWrite = InotifyMask(rawValue: UInt32(truncatingIfNeeded: IN_CLOSE_WRITE))
    /// A file not opened for writing was closed. The corresponding C constant is `IN_CLOSE_NOWRITE`.
    static let closeNoWrite = InotifyMask(rawValue: UInt32(truncatingIfNeeded: IN_CLOSE_NOWRITE))
    /// A file was opened. The corresponding C constant is `IN_OPEN`.
    static let open = InotifyMask(rawValue: UInt32(truncatingIfNeeded: IN_OPEN))
    /// A file was renamed away from the watched directory; ``WatchEvent/cookie`` pairs it with the
    /// matching ``movedTo``. The corresponding C constant is `IN_MOVED_FROM`.
    static let movedFrom = InotifyMask(rawValue: UInt32(truncatingIfNeeded: IN_MOVED_FROM))
    /// A file was renamed into the watched directory (from inside it or from elsewhere).
    /// The corresponding C constant is `IN_MOVED_TO`.
    static let movedTo = InotifyMask(rawValue: UInt32(truncatingIfNeeded: IN_MOVED_TO))
    /// A file or directory was created in the watched directory. The corresponding C constant is `IN_CREATE`.
    static let create = InotifyMask(rawValue: UInt32(truncatingIfNeeded: IN_CREATE))
    /// A file or directory was deleted from the watched directory. The corresponding C constant is `IN_DELETE`.
    static let delete = InotifyMask(rawValue: UInt32(truncatingIfNeeded: IN_DELETE))
    /// The watched directory itself was deleted. The corresponding C constant is `IN_DELETE_SELF`.
    static let deleteSelf = InotifyMask(rawValue: UInt32(truncatingIfNeeded: IN_DELETE_SELF))
    /// The watched directory itself was renamed or moved. The corresponding C constant is `IN_MOVE_SELF`.
    static let moveSelf = InotifyMask(rawValue: UInt32(truncatingIfNeeded: IN_MOVE_SELF))

    // MARK: Reported by the kernel only

    /// The file system holding the watched directory was unmounted; an ``ignored`` follows.
    /// The corresponding C constant is `IN_UNMOUNT`.
    static let unmount = InotifyMask(rawValue: UInt32(truncatingIfNeeded: IN_UNMOUNT))
    /// The kernel's event queue overflowed and events were lost: rescan. The event has no name and
    /// watch descriptor -1. The corresponding C constant is `IN_Q_OVERFLOW`.
    static let queueOverflow = InotifyMask(rawValue: UInt32(truncatingIfNeeded: IN_Q_OVERFLOW))
    /// The watch was removed (explicitly, or because the directory was deleted or unmounted); no more
    /// events come from it. The corresponding C constant is `IN_IGNORED`.
    static let ignored = InotifyMask(rawValue: UInt32(truncatingIfNeeded: IN_IGNORED))
    /// The event's subject is a directory. The corresponding C constant is `IN_ISDIR`.
    static let isDirectory = InotifyMask(rawValue: UInt32(truncatingIfNeeded: IN_ISDIR))

    // MARK: Options for inotify_add_watch only

    /// Fail with `ENOTDIR` unless the path is a directory. The corresponding C constant is `IN_ONLYDIR`.
    static let onlyDirectory = InotifyMask(rawValue: UInt32(truncatingIfNeeded: IN_ONLYDIR))
    /// Do not follow a symbolic link at the path. The corresponding C constant is `IN_DONT_FOLLOW`.
    static let dontFollow = InotifyMask(rawValue: UInt32(truncatingIfNeeded: IN_DONT_FOLLOW))
    /// Stop reporting events for a child once it is unlinked from the watched directory, even while
    /// someone still holds it open. The corresponding C constant is `IN_EXCL_UNLINK`.
    static let excludeUnlinked = InotifyMask(rawValue: UInt32(truncatingIfNeeded: IN_EXCL_UNLINK))
    /// Add to an existing watch's mask instead of replacing it. The corresponding C constant is `IN_MASK_ADD`.
    static let maskAdd = InotifyMask(rawValue: UInt32(truncatingIfNeeded: IN_MASK_ADD))
    /// Remove the watch after its first event. The corresponding C constant is `IN_ONESHOT`.
    static let oneShot = InotifyMask(rawValue: UInt32(truncatingIfNeeded: IN_ONESHOT))

    // MARK: Groups

    /// The events after which the watch on the directory is gone or no longer means DIR's path:
    /// ``deleteSelf``, ``moveSelf``, ``ignored``, ``unmount``. A ``DirectoryWatcher`` finishes its
    /// stream after delivering one of these for the directory itself.
    static let endsWatch: InotifyMask = [.deleteSelf, .moveSelf, .ignored, .unmount]

    /// Every named bit with its English name, in bit order, for ``description``.
    private static let names: [(InotifyMask, String)] = [
        (.access, "access"), (.modify, "modify"), (.attrib, "attrib"), (.closeWrite, "closeWrite"),
        (.closeNoWrite, "closeNoWrite"), (.open, "open"), (.movedFrom, "movedFrom"), (.movedTo, "movedTo"),
        (.create, "create"), (.delete, "delete"), (.deleteSelf, "deleteSelf"), (.moveSelf, "moveSelf"),
        (.unmount, "unmount"), (.queueOverflow, "queueOverflow"), (.ignored, "ignored"),
        (.onlyDirectory, "onlyDirectory"), (.dontFollow, "dontFollow"), (.excludeUnlinked, "excludeUnlinked"),
        (.maskAdd, "maskAdd"), (.isDirectory, "isDirectory"), (.oneShot, "oneShot"),
    ]

    /// The set bits by name, for logs: `[create, isDirectory]`; unnamed bits appear in hex.
    var description: String {
        var parts: [String] = []
        var rest = rawValue
        for (bit, name) in Self.names where contains(bit) {
            parts.append(name)
            rest &= ~bit.rawValue
        }
        if rest != 0 { parts.append("0x" + String(rest, radix: 16)) }
        return "[" + parts.joined(separator: ", ") + "]"
    }
}
