import ArgumentParser
import EmojiArtSync
import Foundation

/// `emojiart-sync status --dir DIR [--json]`: what the agent running on DIR is doing.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the state of the agent running on DIR.",
        discussion: "Exits 0 when an agent runs on DIR, 1 when none does (the last published status is still shown)."
    )

    @OptionGroup var location: DirectoryOption

    @Flag(name: .long, help: "Print the status as JSON, for scripts.")
    var json = false

    func run() async throws {
        let directory = try await location.resolve()
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
