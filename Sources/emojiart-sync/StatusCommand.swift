import ArgumentParser
import EmojiArtSync
import FoundationEssentials

/// `emojiart-sync status --dir DIR [--json]`: what the agent running on DIR is doing.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the state of the agent running on DIR.",
        discussion: """
            Exits 0 when an agent runs on DIR, 1 when none does (the last published status is still shown). \
            With --watch on a terminal, redraws every second: hits by source (memory, disk, network) with their \
            rates, assets ok/missing/failing, repairs, the last and next poll, the last events of the log; keys: \
            m purge memory (SIGUSR1), d purge disk (SIGUSR2, asks y/n first), r re-read now (SIGHUP), q quit. \
            Not on a terminal, it prints one line per second. It exits 0 on q, SIGINT or SIGTERM and 1 when the \
            agent stops, and gives the terminal back as it found it either way.
            """
    )

    @OptionGroup var location: DirectoryOption

    @Flag(name: .long, help: "Print the status as JSON, for scripts.")
    var json = false

    @Flag(name: .long, help: "Keep watching: a live screen on a terminal (keys m, d, r, q), else one line per second.")
    var watch = false

    func validate() throws {
        if watch && json { throw ValidationError("--watch and --json cannot be used together") }
    }

    func run() async throws {
        let directory = try await location.resolveSynced()
        if watch {
            try await StatusWatch(directory: directory).run()
            return
        }
        let holder = DirectoryLock.holder(path: directory.lockPath)
        let published = try? AgentStatus.read(from: directory.statusPath)
        guard let holder else {
            if json, var published {
                published.state = "stopped"
                print(String(decoding: try AgentStatus.encoder.encode(published), as: UTF8.self))
            } else {
                printError("emojiart-sync: no agent runs on \(directory.root)")
                if let published {
                    printError("last published status (agent stopped):\n" + published.humanReadable())
                }
            }
            throw ExitCode(ExitStatus.fatal.rawValue)
        }
        guard let status = published, status.pid == holder else {
            print(json ? #"{"pid": \#(holder), "state": "starting"}"# : "agent: PID \(holder), starting (no status published yet)")
            return
        }
        if json {
            print(String(decoding: try AgentStatus.encoder.encode(status), as: UTF8.self))
        } else {
            print(status.humanReadable())
        }
    }
}
