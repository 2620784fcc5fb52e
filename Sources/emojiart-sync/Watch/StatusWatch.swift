import ArgumentParser
import Dispatch
import EmojiArtSync
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// `emojiart-sync status --watch`: the book's toolbar, live. On a terminal it redraws a screen every second
/// (`StatusScreen`) and answers keys: `m` purge memory (SIGUSR1), `d` purge disk (SIGUSR2, after a y/n
/// question), `r` re-read now (SIGHUP), `q` quit. Elsewhere it prints one line per second. It reads what
/// `status` reads (DIR/.emojiart-sync/status.json and the lock) plus the tail of the agent's log.
///
/// Ends with 0 on `q`, SIGINT or SIGTERM, with 1 when no agent runs on DIR or the agent stops; the terminal
/// is given back (`TerminalSession.restore`) on every one of these paths, and when an error is thrown.
struct StatusWatch {
    /// What wakes the loop.
    private enum Input: Sendable {
        case tick, key(UInt8), signal(Int32), inputClosed
    }

    /// Events shown at most (fewer when the terminal is short).
    static let eventsKept = 12

    let directory: SyncDirectory
    var interval: Duration = .seconds(1)

    func run() async throws {
        guard var pid = DirectoryLock.holder(path: directory.lockPath) else {
            printError("emojiart-sync: no agent runs on \(directory.root)")
            throw ExitCode(ExitStatus.fatal.rawValue)
        }
        let terminal = isatty(STDOUT_FILENO) == 1 ? TerminalSession() : nil
        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self)
        let signals = [SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGTSTP, SIGCONT].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(.signal(number)) }
            source.resume()
            return source
        }
        let keys = terminal.map { _ in Self.readKeys(into: continuation) }
        let ticker = Task { [interval] in
            while !Task.isCancelled {
                continuation.yield(.tick)
                try? await Task.sleep(for: interval)
            }
        }
        terminal?.enter()
        defer {
            terminal?.restore()
            ticker.cancel()
            keys?.cancel()
            for source in signals { source.cancel() }
            continuation.finish()
        }

        var rates = HitRates()
        var prompt: String?
        var notice: String?
        var status: AgentStatus?
        for await input in inputs {
            switch input {
            case .tick:
                guard let holder = DirectoryLock.holder(path: directory.lockPath) else {
                    terminal?.restore()
                    printError("emojiart-sync: the agent (PID \(pid)) on \(directory.root) stopped")
                    throw ExitCode(ExitStatus.fatal.rawValue)
                }
                pid = holder
                status = (try? AgentStatus.read(from: directory.statusPath)).flatMap { $0.pid == holder ? $0 : nil }
                if let status { rates.add(status.hits, at: Date()) }
            case .key(let key):
                if prompt != nil {
                    prompt = nil
                    notice = key == UInt8(ascii: "y") || key == UInt8(ascii: "Y")
                        ? Self.ask(.purgeDisk, pid) : "disk purge not asked for"
                } else {
                    switch key {
                    case UInt8(ascii: "q"), UInt8(ascii: "Q"): return
                    case UInt8(ascii: "m"): notice = Self.ask(.purgeMemory, pid)
                    case UInt8(ascii: "r"): notice = Self.ask(.reload, pid)
                    case UInt8(ascii: "d"):
                        let files = status?.indexFiles.map { "its \($0) files" } ?? "its files"
                        prompt = "Purge the disk cache? PID \(pid) deletes \(files) (never yours) and fetches them again. y/N"
                    default: continue
                    }
                }
            case .signal(SIGINT), .signal(SIGTERM), .signal(SIGHUP):
                return
            case .signal(SIGTSTP):
                // Ctrl-Z: give the terminal back, stop, and take it again when continued (SIGCONT below).
                terminal?.restore()
                kill(getpid(), SIGSTOP)
                continue
            case .signal(SIGCONT):
                terminal?.enter()
            case .signal:
                break  // SIGWINCH: the redraw below reads the new size
            case .inputClosed:
                return
            }
            let screen = StatusScreen(
                status: status, agentRunning: true, rates: rates.rates, events: recentEvents(status), now: Date(),
                prompt: prompt, notice: notice)
            if let terminal {
                let size = terminal.size
                terminal.draw(screen.lines(width: size.width, height: size.height))
            } else if case .tick = input {
                TerminalSession.write(screen.line() + "\n")
            }
        }
    }

    /// Sends `request` and says so, for the notice line.
    private static func ask(_ request: AgentRequest, _ pid: pid_t) -> String {
        if let problem = request.send(to: pid) { return "cannot signal PID \(pid): \(problem)" }
        return "asked PID \(pid) to \(request.summary) (\(request.signalName))"
    }

    /// The last noteworthy lines of the agent's log.
    private func recentEvents(_ status: AgentStatus?) -> [LogRecord] {
        // An agent that writes no log file (`--log-file none`) has none to show.
        guard let path = status.map(\.logFile) ?? directory.logPath else { return [] }
        return Array(LogTail.lastLines(of: path).compactMap(LogRecord.parse).filter(\.isNoteworthy).suffix(Self.eventsKept))
    }

    /// Reads keys from stdin as they come (a dispatch read source), until cancelled or stdin closes.
    private static func readKeys(into continuation: AsyncStream<Input>.Continuation) -> any DispatchSourceRead {
        let source = DispatchSource.makeReadSource(fileDescriptor: STDIN_FILENO, queue: .global())
        source.setEventHandler {
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count > 0 {
                for key in buffer.prefix(count) { continuation.yield(.key(key)) }
            } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                continuation.yield(.inputClosed)
                source.cancel()
            }
        }
        source.resume()
        return source
    }
}
