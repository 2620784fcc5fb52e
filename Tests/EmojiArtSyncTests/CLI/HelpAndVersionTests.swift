import Foundation
import TestSupport
import Testing

/// `--help` shows usage and the subcommands first and the details after the options, `help SUBCOMMAND` is that
/// subcommand's help, and `--version` names the program, its commit and the libraries it runs with.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct HelpAndVersionTests {
    /// Before: the overview's long discussion (description, settings, signals, exit status) came before USAGE,
    /// and the subcommands were not listed.
    @Test func helpPutsUsageAndTheSubcommandsFirst() async throws {
        let out = TemporaryDirectory("help-order")
        let help = try await AgentProcess.run(["--help"], outputDirectory: out.path)
        #expect(help.status == 0, "\(help.stderr)")
        let order = ["USAGE:", "SUBCOMMANDS:", "OPTIONS:", "DESCRIPTION:", "SETTINGS:", "SIGNALS:", "EXIT STATUS:"]
        let offsets = order.map { help.stdout.range(of: "\n" + $0)?.lowerBound }
        #expect(!offsets.contains(nil), "\(help.stdout)")
        #expect(offsets.compactMap { $0 } == offsets.compactMap { $0 }.sorted(), "sections out of order:\n\(help.stdout)")
        let subcommands = try #require(HelpText.section("SUBCOMMANDS", of: help.stdout)).filter { !$0.isEmpty }
        #expect(subcommands.allSatisfy { $0.hasPrefix("  ") && $0.dropFirst(2).first != " " }, "one line each: \(subcommands)")
        #expect(subcommands.map { $0.split(separator: " ").first ?? "" } == ["status", "purge", "scrub", "config", "help"])
        let bare = try await AgentProcess.run(["help"], outputDirectory: out.path)
        #expect(bare.status == 0 && bare.stdout == help.stdout)
    }

    /// Before: `emojiart-sync help status` exited 64 (`Unexpected argument 'help'`), though completions offer `help`.
    @Test func helpSubcommandIsThatSubcommandsHelp() async throws {
        let out = TemporaryDirectory("help-sub")
        for subcommand in try await HelpText.subcommands(outputDirectory: out.path) {
            let help = try await AgentProcess.run(["help", subcommand], outputDirectory: out.path)
            let direct = try await AgentProcess.run([subcommand, "--help"], outputDirectory: out.path)
            #expect(help.status == 0, "help \(subcommand): \(help.stderr)")
            #expect(help.stdout.contains("USAGE: emojiart-sync \(subcommand)"), "\(help.stdout)")
            #expect(help.stdout == direct.stdout)
        }
        let unknown = try await AgentProcess.run(["help", "stauts"], outputDirectory: out.path)
        #expect(unknown.status == 64 && unknown.stderr.contains("no subcommand 'stauts'") && unknown.stderr.contains("scrub"), "\(unknown.stderr)")
    }

    /// Before: `--version` printed `0.1.0` alone.
    @Test func versionNamesTheProgramItsCommitAndTheLibrariesItRunsWith() async throws {
        let out = TemporaryDirectory("version")
        let version = try await AgentProcess.run(["--version"], outputDirectory: out.path)
        #expect(version.status == 0, "\(version.stderr)")
        let lines = version.stdout.split(separator: "\n")
        #expect(lines.count == 2, "\(version.stdout)")
        #expect(lines.first?.hasPrefix("emojiart-sync 0.") == true && lines.first?.contains("(commit ") == true, "\(version.stdout)")
        for library in ["libcurl", "libpng", "SQLite", "OpenSSL"] {
            #expect(version.stdout.contains(try Regex("\(library)/[0-9]+\\.[0-9]+")), "\(library) missing: \(version.stdout)")
        }
    }
}
