import EmojiArtSync

#if canImport(Glibc)
import Glibc
#endif

/// What a person can ask the agent running on DIR to do, and the signal that asks it (the man page's
/// SIGNALS): `purge` and the keys of `status --watch` send them.
enum AgentRequest {
    case purgeMemory, purgeDisk, reload

    var signal: Int32 {
        switch self {
        case .purgeMemory: SIGUSR1
        case .purgeDisk: SIGUSR2
        case .reload: SIGHUP
        }
    }

    var signalName: String {
        switch self {
        case .purgeMemory: "SIGUSR1"
        case .purgeDisk: "SIGUSR2"
        case .reload: "SIGHUP"
        }
    }

    /// What the agent does about it, for messages.
    var summary: String {
        switch self {
        case .purgeMemory: "purge its memory cache"
        case .purgeDisk: "purge its disk cache"
        case .reload: "re-read the feed and rescan"
        }
    }

    /// Sends the signal to `pid`; nil when sent, else why not (`No such process`).
    func send(to pid: pid_t) -> String? {
        kill(pid, signal) == 0 ? nil : String(cString: strerror(errno))
    }
}
