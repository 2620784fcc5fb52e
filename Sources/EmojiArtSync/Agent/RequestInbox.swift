import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Requests a command makes of the agent running on DIR that no signal can carry (`SIGUSR1`, `SIGUSR2` and
/// `SIGHUP` are taken): a file named after the request in `DIR/.emojiart-sync/requests/`, a directory the agent
/// creates at start (mode 0700: only its user can ask) and watches with inotify of its own, so the request is
/// heard at once and the state directory's busier files (the log, the status) wake nothing. The agent removes
/// the file when it takes the request, and publishes the outcome in its status (`emojiart-sync scrub` waits for
/// `lastScrub` there, as `purge` waits for `lastPurge`).
public enum RequestInbox {
    /// What can be asked.
    public enum Request: String, Sendable, CaseIterable {
        /// Re-read and re-hash every owned file now, and repair what is damaged.
        case scrub
    }

    public static func path(in directory: SyncDirectory) -> String {
        directory.stateDirectory + "/requests"
    }

    /// Creates the inbox (the agent, at start); one already there is fine.
    static func prepare(in directory: SyncDirectory) throws(SyncError) {
        let path = path(in: directory)
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw SyncError.system("mkdir", path: path, errno: errno, hint: "cannot create the requests directory")
        }
    }

    /// Leaves `request` for the agent (a command's side): the file is created and closed, which the agent's watch
    /// sees. Throws when the inbox is missing (no agent made it) or cannot be written.
    public static func send(_ request: Request, to directory: SyncDirectory) throws(SyncError) {
        let file = path(in: directory) + "/" + request.rawValue
        let fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw SyncError.system("open", path: file, errno: errno, hint: "cannot leave a request for the agent")
        }
        close(fd)
    }

    /// Takes the requests waiting (the agent's side): removes their files and returns what they asked. Other
    /// names are left alone.
    static func take(in directory: SyncDirectory) -> [Request] {
        let inbox = path(in: directory)
        return Request.allCases.filter { request in unlink(inbox + "/" + request.rawValue) == 0 }
    }
}
