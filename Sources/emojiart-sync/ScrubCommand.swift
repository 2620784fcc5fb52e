import ArgumentParser
import EmojiArtSync
import FoundationEssentials

/// `emojiart-sync scrub --dir DIR`: re-read and re-hash every file the agent wrote, now.
struct ScrubCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scrub",
        abstract: "Re-read and re-hash every file the agent wrote in DIR, now.",
        discussion: """
            A warm start trusts a file whose lstat fingerprint (device, inode, size, mtime, ctime) is the one \
            recorded when the agent wrote or last verified it. Bit rot that leaves the fingerprint alone is found \
            by a scrub: the agent runs one in the background (one pass per --scrub-interval, at most 4 MiB/s); \
            this command runs a whole pass at once. It needs DIR free: when an agent runs on DIR it exits 3. \
            Files found damaged lose their trust and are repaired by the next pass (the agent's next poll, or \
            --once), which logs event=repair reason=corrupt.

            Exits 0 when every file is intact, 2 when some are damaged (listed on stdout), 1 when DIR cannot \
            be used, 3 when an agent runs on DIR.
            """
    )

    @OptionGroup var location: DirectoryOption

    @Flag(name: .shortAndLong, help: "Do not copy log lines to stderr.")
    var quiet = false

    func run() async throws {
        var configuration = AgentConfiguration(directory: try await location.resolve())
        configuration.logToStandardError = !quiet
        let agent: SyncAgent
        do {
            agent = try await SyncAgent(configuration: configuration)
        } catch let error as SyncError where error.code == .locked {
            printError("emojiart-sync: \(error); it scrubs in the background (see --scrub-interval)")
            throw ExitCode(ExitStatus.locked.rawValue)
        } catch {
            printError("emojiart-sync: \(error)")
            throw ExitCode(ExitStatus.fatal.rawValue)
        }
        defer { agent.shutdown() }
        let scrubber = await Scrubber(database: agent.database, logger: agent.logger)
        let found = await scrubber.fullPass()
        agent.logSink.flush()  // the scrub's log lines (stderr) before its summary (stdout)
        print("scrubbed \(found.files) files, \(ByteCount.format(found.bytes)): \(found.damaged.count) damaged")
        for (key, reason) in found.damaged {
            print("damaged: \(AssetFileName.name(for: key)) (\(key), \(reason.rawValue))")
        }
        if !found.damaged.isEmpty { throw ExitCode(ExitStatus.partial.rawValue) }
    }
}
