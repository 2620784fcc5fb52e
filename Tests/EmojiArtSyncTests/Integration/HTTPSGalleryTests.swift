import Foundation
import TestSupport
import Testing

/// An HTTPS gallery whose certificate a private CA signed: trusted with `--ca-cert` (from the flag, the
/// environment or the config file), refused without it with a message about certificate verification, and
/// reached through a same-host `http` -> `https` redirect.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TLSGallery.available, "needs openssl and python3 (contrib/install-deps.sh)"))
struct HTTPSGalleryTests {
    static let count = 9

    @Test func withTheCAItSyncsWithoutItItRefusesSayingTheCertificateIsNotTrusted() async throws {
        let gallery = try await TLSGallery(count: Self.count)
        defer { gallery.stop() }
        let out = TemporaryDirectory("https-out")
        let trusted = TemporaryDirectory("https-trusted")
        let run = try await AgentProcess.run(
            ["--dir", trusted.path, "--server", gallery.origin, "--once", "--ca-cert", gallery.caFile, "-q"], outputDirectory: out.path)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(Self.images(in: trusted) == Self.count)

        let untrusted = TemporaryDirectory("https-untrusted")
        let refused = try await AgentProcess.run(["--dir", untrusted.path, "--server", gallery.origin, "--once", "-q"], outputDirectory: out.path)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("TLS certificate verification failed for 127.0.0.1:\(gallery.port)"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--ca-cert"), "says what to do: \(refused.stderr)")
        #expect(Self.images(in: untrusted) == 0)
    }

    @Test func theCACanComeFromTheEnvironmentOrTheConfigFile() async throws {
        let gallery = try await TLSGallery(count: Self.count)
        defer { gallery.stop() }
        let out = TemporaryDirectory("https-settings-out")
        let xdg = TemporaryDirectory("https-settings-xdg")
        let viaEnvironment = TemporaryDirectory("https-env")
        let environmentRun = try await AgentProcess.run(
            ["--dir", viaEnvironment.path, "--server", gallery.origin, "--once", "-q"], outputDirectory: out.path,
            environment: ["XDG_CONFIG_HOME": xdg.path, "EMOJIART_SYNC_CA_CERT": gallery.caFile])
        #expect(environmentRun.status == 0, "\(environmentRun.stderr)")

        try FileManager.default.createDirectory(atPath: xdg.file("emojiart-sync"), withIntermediateDirectories: true)
        try writeBytes(Array("ca-cert = \(gallery.caFile)\nconnect-timeout = 5s\n".utf8), to: xdg.file("emojiart-sync/config"))
        let viaFile = TemporaryDirectory("https-file")
        let fileRun = try await AgentProcess.run(
            ["--dir", viaFile.path, "--server", gallery.origin, "--once", "-q"], outputDirectory: out.path, environment: ["XDG_CONFIG_HOME": xdg.path])
        #expect(fileRun.status == 0, "\(fileRun.stderr)")
        #expect(Self.images(in: viaFile) == Self.count)

        let missing = try await AgentProcess.run(
            ["--dir", viaFile.path, "--once", "--ca-cert", xdg.file("nope.pem")], outputDirectory: out.path, environment: ["XDG_CONFIG_HOME": xdg.path])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("--ca-cert: cannot read \(xdg.file("nope.pem")): No such file or directory"), "\(missing.stderr)")
    }

    /// The gallery moved to https on the same host: the http origin answers every request with a 301 to the
    /// same path on the https port, and the agent follows it (feed and images alike).
    @Test func anHTTPOriginThatRedirectsToHTTPSOnTheSameHostIsFollowed() async throws {
        let gallery = try await TLSGallery(count: Self.count)
        defer { gallery.stop() }
        let origin = gallery.origin
        let front = try TestHTTPServer { .respond(status: 301, headers: [("Location", origin + $0.target)]) }
        defer { front.stop() }
        let out = TemporaryDirectory("https-redirect-out")
        let dir = TemporaryDirectory("https-redirect")
        let run = try await AgentProcess.run(
            ["--dir", dir.path, "--server", front.origin, "--once", "--ca-cert", gallery.caFile, "-q"], outputDirectory: out.path)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(Self.images(in: dir) == Self.count)
        #expect(front.targets.contains("/gallery/images"))
    }

    private static func images(in dir: TemporaryDirectory) -> Int {
        dir.names().filter { $0.hasSuffix(".png") }.count
    }
}
