import ArgumentParser
import EmojiArtSync
import FoundationEssentials
import Glibc

/// `emojiart-sync scrub --dir DIR`: re-read and re-hash every file the agent wrote, now: by itself when DIR is
/// free, or by asking the agent that runs on DIR (`RequestInbox`) and waiting for its answer.
struct ScrubCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scrub",
        abstract: "Re-read and re-hash every file the agent wrote in DIR, now.",
        discussion: """
            A warm start trusts a file whose lstat fingerprint (device, inode, size, mtime, ctime) is the one \
            recorded when the agent wrote or last verified it. Bit rot that leaves the fingerprint alone is found \
            by a scrub: the agent runs one in the background (one pass per --scrub-interval, at most 4 MiB/s); \
            this command runs a whole pass at once. When an agent runs on DIR it asks that agent (a request file \
            in DIR/.emojiart-sync/requests/), waits up to --timeout for its answer, and the agent repairs what it \
            found at once; otherwise it scrubs DIR itself, and damaged files lose their trust and are repaired by \
            the next pass (the agent's next poll, or --once). Repairs log event=repair reason=corrupt.

            Exits 0 when every file is intact, 2 when some are damaged (listed on stdout), 1 when DIR is not a \
            synced directory, cannot be used, or the agent does not answer in time.
            """
    )

    @OptionGroup var location: DirectoryOption

    @Flag(name: .shortAndLong, help: "Do not copy log lines to stderr.")
    var quiet = false

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("How long to wait for a running agent's scrub: 10m, 1h (a plain number is seconds; default 1h).", valueName: "duration"))
    var timeout = "1h"

    func run() async throws {
        guard let timeout = DurationText.seconds(self.timeout, plainUnit: 1), (1...86_400).contains(timeout) else {
            throw ValidationError("--timeout \(DurationText.expected(1...86_400, plainUnit: 1)) (--timeout \(self.timeout))")
        }
        let directory = try await location.resolveSynced()
        if let pid = DirectoryLock.holder(path: directory.lockPath) {
            try await ask(pid, directory, timeout: timeout)
            return
        }
        var configuration = AgentConfiguration(directory: directory)
        configuration.logging.toStandardError = !quiet
        let agent: SyncAgent
        do {
            agent = try await SyncAgent(configuration: configuration)
        } catch let error as SyncError where error.code == .locked {
            // An agent started meanwhile: it is the one to ask.
            guard let pid = DirectoryLock.holder(path: directory.lockPath) else {
                printError("emojiart-sync: \(error)")
                throw ExitCode(ExitStatus.locked.rawValue)
            }
            try await ask(pid, directory, timeout: timeout)
            return
        } catch {
            printError("emojiart-sync: \(error)")
            throw ExitCode(ExitStatus.fatal.rawValue)
        }
        defer { agent.shutdown() }
        let found = await agent.scrub()
        agent.flushLog()  // the scrub's log lines (stderr) before its summary (stdout)
        try report(files: found.files, bytes: found.bytes, damaged: found.damaged.map {
            "\(AssetFileName.name(for: $0.key)) (\($0.key), \($0.reason.rawValue))"
        })
    }

    /// Asks the agent `pid` to scrub and waits for its status to show that scrub.
    private func ask(_ pid: pid_t, _ directory: SyncDirectory, timeout: Int) async throws {
        let before = (try? AgentStatus.read(from: directory.statusPath))?.lastScrub?.sequence ?? 0
        do {
            try RequestInbox.send(.scrub, to: directory)
        } catch {
            printError("emojiart-sync: agent PID \(pid) runs on \(directory.root), but \(error)")
            throw ExitCode(ExitStatus.fatal.rawValue)
        }
        if !quiet { printError("emojiart-sync: asked agent PID \(pid) to scrub \(directory.root) now; waiting for it") }
        let deadline = ContinuousClock.now.advanced(by: .seconds(timeout))
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            guard let status = try? AgentStatus.read(from: directory.statusPath), status.pid == pid else { continue }
            if let scrub = status.lastScrub, scrub.sequence > before {
                try report(files: scrub.files, bytes: scrub.bytes, damaged: scrub.damaged, repairing: true)
                return
            }
            if status.state == "stopped" { break }
        }
        printError("emojiart-sync: asked agent PID \(pid) to scrub, but it did not report the scrub within \(DurationText.format(timeout))")
        throw ExitCode(ExitStatus.fatal.rawValue)
    }

    /// Prints what the scrub found; exits 2 when something was damaged.
    private func report(files: Int, bytes: Int, damaged: [String], repairing: Bool = false) throws {
        print("scrubbed \(files) files, \(ByteCount.format(bytes)): \(damaged.count) damaged" + (repairing && !damaged.isEmpty ? " (the agent repairs them now)" : ""))
        for file in damaged { print("damaged: \(file)") }
        if !damaged.isEmpty { throw ExitCode(ExitStatus.partial.rawValue) }
    }
}
