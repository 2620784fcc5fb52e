import EmojiArtGallery
import Foundation
import TestSupport
import Testing

/// DIR may not be the root of a file system or the user's home itself, unless `--allow-root-dir`: before, `--dir /`
/// as root wrote PNGs and `.emojiart-sync/` into `/`.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct DirectoryGuardTests {
    @Test func theRootAndTheHomeDirectoryAreRefusedAndNothingIsWritten() async throws {
        let out = TemporaryDirectory("guard-out")
        let home = TemporaryDirectory("guard-home")
        let environment = ["HOME": home.path, "XDG_CONFIG_HOME": home.path + "/.config"]
        // The root through `config`, which checks the settings as a run does and never creates anything: a test of
        // a run there would write into the real `/` whenever the guard broke (as the code before it did).
        for (dir, command) in [("/", ["config"]), ("//", ["config"]), (home.path, ["--once"]), (home.path + "/.", ["--once"])] {
            // A server nothing listens on: had the guard let it through, the run would fail later, differently.
            let run = try await AgentProcess.run(
                command + ["--dir", dir, "--server", "http://127.0.0.1:9"], outputDirectory: out.path, environment: environment)
            #expect(run.status == 64, "--dir \(dir): \(run.stderr)")
            #expect(run.stderr.contains("refusing to sync there") && run.stderr.contains("--allow-root-dir"), "\(run.stderr)")
            #expect(!run.stderr.contains("Usage:"), "a refusal is not followed by the usage text: \(run.stderr)")
        }
        #expect(home.names().isEmpty, "\(home.names())")

        // Asked for, it is allowed: here a home directory that is only a test's.
        let gallery = try await GalleryFixture(count: 2, imageSize: .small)
        let allowed = try await AgentProcess.run(
            ["--dir", home.path, "--once", "--server", gallery.baseURL, "-q", "--allow-root-dir"], outputDirectory: out.path,
            environment: environment)
        await gallery.stop()
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(FileManager.default.fileExists(atPath: home.file("gallery_image_2.png")))
        let fromEnvironment = try await AgentProcess.run(
            ["config", "--dir", home.path], outputDirectory: out.path,
            environment: environment.merging(["EMOJIART_SYNC_ALLOW_ROOT_DIR": "yes"]) { _, new in new })
        #expect(fromEnvironment.status == 0 && fromEnvironment.stdout.contains("allow-root-dir = yes"), "\(fromEnvironment.stdout) \(fromEnvironment.stderr)")
    }

    @Test func aMountPointIsRefused() async throws {
        let out = TemporaryDirectory("guard-mount-out")
        let run = try await AgentProcess.run(["config", "--dir", "/proc"], outputDirectory: out.path)
        #expect(run.status == 64 && run.stderr.contains("mount point"), "\(run.stderr)")
    }
}
