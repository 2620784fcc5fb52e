@testable import EmojiArtSync
@testable import emojiart_sync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `status --watch` in a real terminal (a tmux pane: `send-keys`, `capture-pane`) against a real agent,
/// and on a pipe.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct StatusWatchTests {
    /// A private tmux server (its own socket) with one pane running `sh`, 100x40.
    final class Tmux {
        static var path: String? { RepositoryFiles.tool("tmux") }
        let socket = "emojiart-watch-\(UUID().uuidString.prefix(8))"
        let tmux: String

        init() throws {
            tmux = try #require(Self.path)
            try run(["new-session", "-d", "-x", "100", "-y", "40", "-s", "w", "sh"])
        }

        /// Runs a tmux command (posix_spawn, waitpid), its output through a file. Not Foundation's `Process`,
        /// nor a pipe: the tmux server that `new-session` starts keeps the descriptors it was given, and
        /// `Process` never saw that client end.
        @discardableResult
        func run(_ arguments: [String]) throws -> String {
            let output = "/tmp/\(socket)-\(UUID().uuidString.prefix(8))"
            defer { unlink(output) }
            let command = ([tmux, "-L", socket] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }
                .joined(separator: " ") + " </dev/null >\(output) 2>&1"
            var pid: pid_t = 0
            let argv: [UnsafeMutablePointer<CChar>?] = ["/bin/sh", "-c", command].map { (text: String) in strdup(text) } + [nil]
            defer { argv.forEach { free($0) } }
            guard posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ) == 0 else { throw TestFailure("posix_spawn: errno \(errno)") }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            let text = String(decoding: readBytes(output) ?? [], as: UTF8.self)
            guard status == 0 else { throw TestFailure("tmux \(arguments.joined(separator: " ")): \(text)") }
            return text
        }

        func type(_ line: String) throws { try run(["send-keys", "-t", "w", line, "Enter"]) }
        func key(_ key: String) throws { try run(["send-keys", "-t", "w", key]) }
        var screen: String { (try? run(["capture-pane", "-p", "-t", "w"])) ?? "" }
        /// `alternate_on cursor_flag`: `0 1` once the terminal is back to normal.
        var modes: String { ((try? run(["display", "-p", "-t", "w", "#{alternate_on} #{cursor_flag}"])) ?? "").trimmingCharacters(in: .whitespacesAndNewlines) }

        func waitFor(_ text: String) async -> Bool {
            await eventually { self.screen.contains(text) }
        }

        deinit { _ = try? run(["kill-server"]) }
    }

    /// An agent (a child process) on a fresh DIR against a gallery, once its first pass is published.
    private func startAgent(_ gallery: GalleryFixture, _ dir: TemporaryDirectory, _ out: TemporaryDirectory) async throws -> AgentProcess {
        let agent = try AgentProcess(["--dir", dir.path, "--server", gallery.baseURL, "--interval", "300", "-q"], outputDirectory: out.path)
        let published = await eventually {
            (try? AgentStatus.read(from: dir.file(".emojiart-sync/status.json")))?.assets.ok == gallery.validNumbers.count
        }
        #expect(published, "the agent published its first pass")
        return agent
    }

    @Test(.enabled(if: Tmux.path != nil, "tmux is not installed (contrib/install-deps.sh)"))
    func theScreenShowsTheCountersAnswersKeysAndQGivesTheTerminalBack() async throws {
        let gallery = try await GalleryFixture(count: 12)
        let dir = TemporaryDirectory("watch")
        let out = TemporaryDirectory("watch-out")
        let agent = try await startAgent(gallery, dir, out)
        defer { agent.signal(SIGTERM) }
        let status = try AgentStatus.read(from: dir.file(".emojiart-sync/status.json"))
        let tmux = try Tmux()
        try tmux.type("stty -g > \(out.file("before")); \(AgentProcess.binary) status --watch --dir \(dir.path); echo \"watch exit=$?\"; \(Self.saveTermios(to: out.file("after")))")

        #expect(await tmux.waitFor("HITS"), "\(tmux.screen)")
        let screen = tmux.screen
        #expect(screen.contains("PID \(agent.pid)"))
        #expect(screen.contains(Self.hitsRow("memory", status.hits.memory)), "\(screen)")
        #expect(screen.contains(Self.hitsRow("disk", status.hits.disk)), "\(screen)")
        #expect(screen.contains(Self.hitsRow("network", status.hits.network)), "\(screen)")
        #expect(screen.contains("ASSETS   \(status.assets.ok) ok   \(status.assets.missing) missing"), "\(screen)")
        #expect(screen.contains("start    agent started"), "the log's events: \(screen)")
        #expect(screen.contains(StatusScreen.keyHelp))
        #expect(tmux.modes == "1 0", "alternate screen on, cursor hidden")

        try tmux.key("m")
        #expect(await tmux.waitFor("PURGE    memory"), "the agent purged and the screen shows it: \(tmux.screen)")
        try tmux.key("d")
        #expect(await tmux.waitFor("Purge the disk cache? PID \(agent.pid)"), "\(tmux.screen)")
        try tmux.key("n")
        #expect(await tmux.waitFor("disk purge not asked for"))
        #expect(!tmux.screen.contains("PURGE    disk"))

        try tmux.key("q")
        #expect(await tmux.waitFor("watch exit=0"), "\(tmux.screen)")
        #expect(tmux.modes == "0 1", "alternate screen left, cursor shown")
        #expect(await eventually { FileManager.default.fileExists(atPath: out.file("after")) })
        #expect(readBytes(out.file("before")) == readBytes(out.file("after")), "termios as before")
        await gallery.stop()
    }

    @Test(.enabled(if: Tmux.path != nil, "tmux is not installed (contrib/install-deps.sh)"))
    func theAgentStoppingOrASIGTERMEndsTheWatchAndGivesTheTerminalBack() async throws {
        let gallery = try await GalleryFixture(count: 4)
        let dir = TemporaryDirectory("watch-gone")
        let out = TemporaryDirectory("watch-gone-out")
        let agent = try await startAgent(gallery, dir, out)
        let tmux = try Tmux()
        let watch = "\(AgentProcess.binary) status --watch --dir \(dir.path)"
        // The first exit status goes to a file too: the second watch may take the screen (its alternate screen hides
        // the line) before a loaded machine lets the test look at it.
        try tmux.type("stty -g > \(out.file("before")); \(watch); echo \"first exit=$?\" | tee \(out.file("first")); \(watch); echo \"second exit=$?\"; \(Self.saveTermios(to: out.file("after")))")
        #expect(await tmux.waitFor("HITS"))
        let first = try #require(Self.pids(of: "status --watch --dir \(dir.path)").first)
        kill(first, SIGTERM)
        #expect(
            await eventually { (try? String(contentsOfFile: out.file("first"), encoding: .utf8)) == "first exit=0\n" },
            "\(tmux.screen)")
        #expect(await eventually { Self.pids(of: "status --watch --dir \(dir.path)").count == 1 && tmux.modes == "1 0" })

        agent.signal(SIGTERM)
        #expect(await agent.waitForExit() == 0)
        #expect(await tmux.waitFor("second exit=1"), "\(tmux.screen)")
        #expect(tmux.screen.contains("the agent (PID \(agent.pid)) on \(dir.path) stopped"))
        #expect(tmux.modes == "0 1")
        #expect(await eventually { FileManager.default.fileExists(atPath: out.file("after")) })
        #expect(readBytes(out.file("before")) == readBytes(out.file("after")))
        await gallery.stop()
    }

    @Test func onAPipeItPrintsOneLinePerIntervalUntilSIGTERM() async throws {
        let gallery = try await GalleryFixture(count: 4)
        let dir = TemporaryDirectory("watch-pipe")
        let out = TemporaryDirectory("watch-pipe-out")
        let agent = try await startAgent(gallery, dir, out)
        defer { agent.signal(SIGTERM) }
        let watch = try AgentProcess(["status", "--watch", "--dir", dir.path], outputDirectory: out.path)
        #expect(await eventually { watch.stdout.split(separator: "\n").count >= 3 }, "\(watch.stdout)")
        watch.signal(SIGTERM)
        #expect(await watch.waitForExit() == 0)
        let lines = watch.stdout.split(separator: "\n")
        #expect(lines.allSatisfy { $0.contains("pid=\(agent.pid) agent=running memory=") && $0.contains("ok=4 missing=0 failing=0 total=4") }, "\(watch.stdout)")
        #expect(!watch.stdout.contains("\u{1B}"), "no escape sequences on a pipe")
        await gallery.stop()
    }

    /// A shell command saving the terminal's settings (`stty -g`) to `path` so that the file appears only once it
    /// is whole: the shell creates a redirection's file before `stty` writes, and a test that waits for the file
    /// to exist would otherwise read it empty.
    static func saveTermios(to path: String) -> String {
        "stty -g > \(path).part && mv \(path).part \(path)"
    }

    /// `  memory        54`: a source and its total, as the screen aligns them.
    static func hitsRow(_ source: String, _ total: Int) -> String {
        "  " + source + String(repeating: " ", count: 16 - source.count - "\(total)".count) + "\(total)"
    }

    /// PIDs of processes whose command line contains `text` (from /proc).
    static func pids(of text: String) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry in
            guard let pid = pid_t(entry), let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
            let command = String(decoding: data.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
            // The program itself, not a process that only names it (the `tmux send-keys` client that typed the
            // command line has both strings in its arguments, and on a loaded machine it may still be alive).
            return command.hasPrefix(AgentProcess.binary + " ") && command.contains(text) ? pid : nil
        }
    }
}
