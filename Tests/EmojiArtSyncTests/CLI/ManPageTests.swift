import Foundation
import TestSupport
import Testing

/// The man pages are clean roff, and emojiart-sync(1) documents every option `--help` lists.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ManPageTests {
    @Test(.enabled(if: RepositoryFiles.tool("mandoc") != nil, "mandoc is not installed (contrib/install-deps.sh installs it)"),
          arguments: ["man/emojiart-sync.1", "man/emojiart-gallery.1"])
    func mandocFindsNothingToWarnAbout(page: String) throws {
        let mandoc = try #require(RepositoryFiles.tool("mandoc"))
        let lint = try RepositoryFiles.run(mandoc, ["-T", "lint", "-W", "warning", page])
        #expect(lint.status == 0 && lint.output.isEmpty, "\(page):\n\(lint.output)")
    }

    @Test func everyOptionOfEveryCommandIsInTheManPage() async throws {
        let out = TemporaryDirectory("man-options")
        let roff = try String(contentsOfFile: RepositoryFiles.root + "/man/emojiart-sync.1", encoding: .utf8)
        // Roff spells a dash `\-`; fonts `\fB` and friends may sit inside a word.
        let text = roff.replacingOccurrences(of: "\\-", with: "-")
            .replacingOccurrences(of: #"\\f[BIRP]"#, with: "", options: .regularExpression)
        for command in try await HelpText.commands(outputDirectory: out.path) {
            for option in try await HelpText.longOptions(command, outputDirectory: out.path) {
                #expect(text.contains(option), "\(command) \(option) is not in man/emojiart-sync.1")
            }
        }
    }

    /// Every option of a sync run can come from the environment (`--max-delete` from `EMOJIART_SYNC_MAX_DELETE`),
    /// so ENVIRONMENT names each variable. It missed the two options added last before this test.
    @Test func everyOptionOfASyncRunHasItsVariableInTheEnvironmentSection() async throws {
        let out = TemporaryDirectory("man-environment")
        let roff = try String(contentsOfFile: RepositoryFiles.root + "/man/emojiart-sync.1", encoding: .utf8)
        let sections = roff.components(separatedBy: "\n.SH ")
        let environment = try #require(sections.first { $0.hasPrefix("ENVIRONMENT") }, "no ENVIRONMENT section")
            .replacingOccurrences(of: "\\-", with: "-")
        // `--dry-run` is a flag only, on purpose: the section says it has no variable.
        let options = try await HelpText.longOptions([], outputDirectory: out.path)
            .subtracting(["--help", "--version", "--dry-run"])
        #expect(options.contains("--max-delete"))
        #expect(environment.contains(".B --dry-run\nhas no variable"), "ENVIRONMENT says why --dry-run has none")
        for option in options {
            let variable = "EMOJIART_SYNC_" + option.dropFirst(2).uppercased().replacingOccurrences(of: "-", with: "_")
            #expect(environment.contains(".B \(variable)\n"), "\(variable) (for \(option)) is not in ENVIRONMENT")
        }
    }
}
