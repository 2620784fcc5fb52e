import ArgumentParser
import EmojiArtSync
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// `emojiart-sync purge memory|disk --dir DIR`: asks the running agent to purge a cache, waits for it to
/// publish the result, and prints it.
struct PurgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge",
        abstract: "Ask the agent running on DIR to purge its memory or disk cache.",
        discussion: """
            memory sends SIGUSR1 (the next accesses are disk hits); disk sends SIGUSR2 (the agent removes its \
            own files, never yours, and fetches everything again). A --once run answers a memory purge and \
            refuses a disk purge. Exits 0 once the agent reports the purge, 1 when no agent runs on DIR, it \
            refuses the purge, or it does not answer within --timeout.
            """
    )

    enum Scope: String, ExpressibleByArgument, CaseIterable {
        case memory, disk
    }

    @Argument(help: "memory or disk.")
    var scope: Scope

    @OptionGroup var location: DirectoryOption

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("How long to wait for the agent's answer: 30s, 2m (a plain number is seconds).", valueName: "duration"))
    var timeout = "30s"

    func run() async throws {
        guard let timeout = DurationText.seconds(self.timeout, plainUnit: 1), (1...3_600).contains(timeout) else {
            throw ValidationError("--timeout \(DurationText.expected(1...3_600, plainUnit: 1)) (--timeout \(self.timeout))")
        }
        let directory = try await location.resolveSynced()
        guard let pid = DirectoryLock.holder(path: directory.lockPath) else {
            printError("emojiart-sync: no agent runs on \(directory.root); nothing to purge")
            throw ExitCode(ExitStatus.fatal.rawValue)
        }
        let before = (try? AgentStatus.read(from: directory.statusPath))?.lastPurge?.sequence ?? 0
        if let problem = (scope == .memory ? AgentRequest.purgeMemory : .purgeDisk).send(to: pid) {
            printError("emojiart-sync: cannot signal PID \(pid): \(problem)")
            throw ExitCode(ExitStatus.fatal.rawValue)
        }
        let deadline = ContinuousClock.now.advanced(by: .seconds(timeout))
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            if let status = try? AgentStatus.read(from: directory.statusPath), status.pid == pid,
                let purge = status.lastPurge, purge.sequence > before, purge.scope == scope.rawValue
            {
                if let refused = purge.refused {
                    printError("emojiart-sync: PID \(pid) did not purge \(scope.rawValue): \(refused)")
                    throw ExitCode(ExitStatus.fatal.rawValue)
                }
                let what = scope == .memory ? "entries" : "files"
                print("purged \(scope.rawValue): \(purge.entries) \(what), \(ByteCount.format(purge.bytes)) (agent PID \(pid))")
                return
            }
        }
        printError("emojiart-sync: signalled PID \(pid), but it did not report the purge within \(DurationText.format(timeout))")
        throw ExitCode(ExitStatus.fatal.rawValue)
    }
}
