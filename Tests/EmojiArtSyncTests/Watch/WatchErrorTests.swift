@testable import EmojiArtSync
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension WatchTests {
    /// The limit messages tell a user which sysctl, its value now, and how to raise it. A test cannot
    /// lower the system's limits, so it checks the message builders with the values /proc reports.
    @Suite("WatchError")
    struct Errors {
        @Test("ENOSPC from inotify_add_watch names fs.inotify.max_user_watches, its value, and the fix")
        func watchLimit() throws {
            let current = try #require(InotifyLimit.maxUserWatches.currentValue(), "/proc/sys/fs/inotify readable")
            #expect(current > 0)

            let message = WatchError.watchLimitMessage(path: "/srv/art", currentValue: current)
            #expect(message.contains("/srv/art"))
            #expect(message.contains("fs.inotify.max_user_watches is \(current)"))
            #expect(message.contains("sudo sysctl -w fs.inotify.max_user_watches=\(current * 2)"))
            #expect(message.contains("/etc/sysctl.d/"))

            let error = WatchError.addWatchFailed(errno: ENOSPC, path: "/srv/art")
            #expect(error.kind == .watchLimit)
            #expect(error.message == message)
            #expect(error.description.hasSuffix("(inotify_add_watch, errno \(ENOSPC))"))
        }

        @Test("EMFILE from inotify_init1 names fs.inotify.max_user_instances and its value")
        func instanceLimit() throws {
            let current = try #require(InotifyLimit.maxUserInstances.currentValue())

            let error = WatchError.initFailed(errno: EMFILE, path: "/srv/art")
            #expect(error.kind == .instanceLimit)
            #expect(error.call == "inotify_init1")
            #expect(error.message.contains("fs.inotify.max_user_instances is \(current)"))
            #expect(error.message.contains("sysctl -w fs.inotify.max_user_instances=\(current * 2)"))
            #expect(error.message.contains("ulimit -n"), "EMFILE can also be the process's own descriptor limit")
        }

        @Test("an unreadable limit still says where to look and how to raise it")
        func unknownValue() {
            let message = WatchError.watchLimitMessage(path: "/srv/art", currentValue: nil)
            #expect(message.contains("could not be read from /proc/sys/fs/inotify/max_user_watches"))
            #expect(message.contains("sysctl -w fs.inotify.max_user_watches=N"))
        }

        @Test("other errno values are system errors with strerror")
        func otherErrors() {
            let error = WatchError.addWatchFailed(errno: EACCES, path: "/root/x")
            #expect(error.kind == .system)
            #expect(error.message == "cannot watch /root/x: Permission denied")
            #expect(error.description == "cannot watch /root/x: Permission denied (inotify_add_watch, errno \(EACCES))")
        }
    }
}
