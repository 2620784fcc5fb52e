import Foundation
import Testing

/// The man pages are clean roff, and emojiart-sync(1) documents every option `--help` lists.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ManPageTests {
    @Test(.enabled(if: RepositoryFiles.tool("mandoc") != nil, "mandoc is not installed (contrib/install-deps.sh installs it)"),
          arguments: ["man/emojiart-sync.1", "man/emojiart-gallery.1"])
    func mandocFindsNothingToWarnAbout(page: String) throws {
        let lint = try RepositoryFiles.run(RepositoryFiles.tool("mandoc")!, ["-T", "lint", "-W", "warning", page])
        #expect(lint.status == 0 && lint.output.isEmpty, "\(page):\n\(lint.output)")
    }

    @Test func everyOptionOfEveryCommandIsInTheManPage() async throws {
        let out = TemporaryDirectory("man-options")
        let roff = try String(contentsOfFile: RepositoryFiles.root + "/man/emojiart-sync.1", encoding: .utf8)
        // Roff spells a dash `\-`; fonts `\fB` and friends may sit inside a word.
        let text = roff.replacingOccurrences(of: "\\-", with: "-")
            .replacingOccurrences(of: #"\\f[BIRP]"#, with: "", options: .regularExpression)
        for command in HelpText.commands {
            for option in try await HelpText.longOptions(command, outputDirectory: out.path) {
                #expect(text.contains(option), "\(command) \(option) is not in man/emojiart-sync.1")
            }
        }
    }
}
