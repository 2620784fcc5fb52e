import Foundation
import TestSupport
import Testing

/// The unit files in contrib/systemd, checked by systemd's own parser against the agent binary of this build.
@Suite(.timeLimit(.minutes(2)))
struct SystemdUnitTests {
    static let analyzer = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test(.enabled(if: analyzer != nil, "systemd-analyze is not installed"))
    func bothUnitsVerifyCleanWithTheBuiltBinary() async throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let script = repository.appendingPathComponent("contrib/systemd/verify-units.sh").path
        let verify = try await ChildProcess.run(
            executable: "/bin/sh", [script, AgentProcess.binary], mergingStandardError: true, timeout: .seconds(120))
        let said = verify.stdout
        #expect(verify.status == 0, "systemd-analyze verify: \(said)")
        #expect(said.contains("verify clean"))
    }

    /// The plain unit takes DIR from the config file. Before, `ExecStart=... --dir %h/emoji` was a flag, and a flag
    /// wins over the file: `dir = ~/pictures` in ~/.config/emojiart-sync/config was ignored and ~/emoji synced.
    /// This runs the unit's own command line (its binary the built one, `%h` a scratch home) for one pass.
    @Test func thePlainUnitSyncsTheDirectoryOfTheConfigFile() async throws {
        let unit = try UnitFile("emojiart-sync.service")
        let home = TemporaryDirectory("unit-home")
        try FileManager.default.createDirectory(atPath: home.file(".config/emojiart-sync"), withIntermediateDirectories: true)
        try "dir = ~/pictures\n".write(toFile: home.file(".config/emojiart-sync/config"), atomically: true, encoding: .utf8)
        let gallery = try await GalleryFixture(count: 3)

        let command = unit.execStart(home: home.path)
        #expect(!command.contains("--dir"), "\(command)")
        let run = try await AgentProcess.run(
            Array(command.dropFirst()) + ["--once", "--quiet", "--server", gallery.baseURL], outputDirectory: home.path,
            environment: ["HOME": home.path, "XDG_CONFIG_HOME": home.file(".config")])
        await gallery.stop()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(home.names(in: "pictures").filter { $0.hasSuffix(".png") }.count == gallery.validNumbers.count)
        #expect(!FileManager.default.fileExists(atPath: home.file("emoji")))
        // The sandbox lets it write there: the home is writable, and only paths the agent must never write are not.
        #expect(unit.values("ReadWritePaths") == ["%h"], "\(unit.values("ReadWritePaths"))")
        let readOnly = unit.values("ReadOnlyPaths").map { String($0.drop { $0 == "-" }) }
        #expect(readOnly.allSatisfy { !"%h/pictures/".hasPrefix($0 + "/") }, "\(readOnly)")
    }

    /// A lasting failure stopped nowhere: exit 1 restarted every 5 s forever. And `network-online.target` means
    /// nothing to a user manager (it has no such target), so the units do not name it.
    @Test(arguments: ["emojiart-sync.service", "emojiart-sync@.service"])
    func eachUnitLimitsItsRestartsAndWaitsForNoSystemTarget(name: String) throws {
        let unit = try UnitFile(name)
        #expect(unit.values("StartLimitIntervalSec", section: "Unit").count == 1, "\(name)")
        #expect(unit.values("StartLimitBurst", section: "Unit").compactMap { Int($0) }.allSatisfy { $0 > 1 && $0 <= 10 })
        #expect(!unit.settings.contains { $0.contains("network-online.target") }, "\(name)")
        #expect(unit.values("Restart") == ["on-failure"])
    }

    /// The units' system call filter lets the agent use fanotify, which systemd files under `@privileged`: without
    /// it `fanotify_init` failed with `EPERM` under the units, and a `rm -rf DIR` during a large sync could fail
    /// (the agent said so once in its log). The filter's groups are expanded by systemd's own tool.
    @Test(.enabled(if: analyzer != nil, "systemd-analyze is not installed"), arguments: ["emojiart-sync.service", "emojiart-sync@.service"])
    func eachUnitLetsTheAgentUseFanotify(name: String) async throws {
        let unit = try UnitFile(name)
        var allowed: Set<String> = []
        var expanded: Set<String> = []
        var entries = unit.values("SystemCallFilter").flatMap { $0.split(separator: " ").map(String.init) }
        while let entry = entries.popLast() {
            guard entry.hasPrefix("@") else {
                allowed.insert(entry)
                continue
            }
            guard expanded.insert(entry).inserted else { continue }
            let group = try await ChildProcess.run(executable: try #require(Self.analyzer), ["syscall-filter", entry])
            entries += group.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty && !$0.hasPrefix("#") && $0 != entry }
        }
        #expect(allowed.contains("fanotify_init") && allowed.contains("fanotify_mark"), "\(name)")
        #expect(allowed.contains("inotify_add_watch"), "\(name): the expansion found nothing")
    }

    /// The template keeps its instance as DIR: a flag, and its one writable path.
    @Test func theTemplateUnitSyncsItsInstanceDirectory() throws {
        let unit = try UnitFile("emojiart-sync@.service")
        #expect(unit.execStart(home: "/home/me").suffix(2) == ["--dir", "%f"])
        #expect(unit.values("ReadWritePaths") == ["%f"])
    }
}

/// A unit file of contrib/systemd, read as `key=value` lines per `[Section]` (no continuation lines in ours).
private struct UnitFile {
    let text: String

    init(_ name: String) throws {
        text = try String(contentsOfFile: RepositoryFiles.root + "/contrib/systemd/" + name, encoding: .utf8)
    }

    /// Its lines but comments and blank ones.
    var settings: [String] {
        text.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") }
    }

    /// The words of `key`'s values in `section` (every section when nil), in order.
    func values(_ key: String, section: String? = nil) -> [String] {
        var current = ""
        var found: [String] = []
        for line in settings {
            if line.hasPrefix("["), line.hasSuffix("]") {
                current = String(line.dropFirst().dropLast())
            } else if line.hasPrefix(key + "="), section == nil || section == current {
                found.append(contentsOf: line.dropFirst(key.count + 1).split(separator: " ").map(String.init))
            }
        }
        return found
    }

    /// `ExecStart=`'s words, `%h` replaced by `home`, the leading prefix characters (`-@:+!`) dropped.
    func execStart(home: String) -> [String] {
        let words = values("ExecStart").map { $0.replacingOccurrences(of: "%h", with: home) }
        guard let first = words.first else { return [] }
        return [String(first.drop { "-@:+!".contains($0) })] + words.dropFirst()
    }
}
