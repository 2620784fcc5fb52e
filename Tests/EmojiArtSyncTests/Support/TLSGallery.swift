import Foundation

#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// A real HTTPS gallery on 127.0.0.1: a certificate authority made for the test (openssl), a server
/// certificate it signed for 127.0.0.1, and the gallery exported as static files (`emojiart-gallery export`)
/// served by Python's `http.server` wrapped in `ssl`. Nothing of it is trusted by the system: only a client
/// given ``caFile`` accepts it. Call `stop()` at the end of the test.
final class TLSGallery {
    /// Whether the tools it needs are installed (contrib/install-deps.sh installs them).
    static var available: Bool { RepositoryFiles.tool("openssl") != nil && RepositoryFiles.tool("python3") != nil }

    /// The CA's certificate (PEM), for `--ca-cert`.
    let caFile: String
    /// `https://127.0.0.1:PORT`.
    let origin: String
    let port: Int
    private let server: Process
    private let directory: TemporaryDirectory

    /// `count` small images; a count below 10 has no error item, so a `--once` against it can be complete.
    init(count: Int) async throws {
        directory = TemporaryDirectory("tls-gallery")
        let dir = directory.path
        let openssl = try Self.tool("openssl")
        try Self.run(openssl, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=emojiart test CA",
                               "-keyout", "ca.key", "-out", "ca.pem"], in: dir)
        try Self.run(openssl, ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                               "-keyout", "server.key", "-out", "server.csr"], in: dir)
        try writeBytes(Array("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n".utf8), to: dir + "/server.ext")
        try Self.run(openssl, ["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                               "-days", "2", "-extfile", "server.ext", "-out", "server.pem"], in: dir)
        let gallery = URL(fileURLWithPath: AgentProcess.binary).deletingLastPathComponent().appendingPathComponent("emojiart-gallery").path
        try Self.run(gallery, ["export", "--dir", dir + "/site", "--count", "\(count)", "--small"], in: dir)
        try writeBytes(Array(Self.serverScript.utf8), to: dir + "/serve.py")

        let server = Process()
        server.executableURL = URL(fileURLWithPath: try Self.tool("python3"))
        server.arguments = [dir + "/serve.py", dir + "/site", dir + "/server.pem", dir + "/server.key"]
        let announced = dir + "/origin"
        _ = FileManager.default.createFile(atPath: announced, contents: nil)
        server.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: announced))
        server.standardError = FileHandle.nullDevice
        try server.run()
        self.server = server
        var line = ""
        _ = await eventually(timeout: .seconds(20)) {
            line = (try? String(contentsOfFile: announced, encoding: .utf8)) ?? ""
            return line.hasSuffix("\n") || !server.isRunning
        }
        origin = line.trimmingCharacters(in: .whitespacesAndNewlines)
        caFile = dir + "/ca.pem"
        guard origin.hasPrefix("https://127.0.0.1:"), let port = Int(origin.split(separator: ":").last ?? "") else {
            kill(server.processIdentifier, SIGKILL)
            throw TestFailure("the TLS server did not start (it printed \"\(line)\")")
        }
        self.port = port
    }

    /// Kills the server: SIGKILL, because a child of the test process inherits the SIGTERM the tests' agents
    /// ignore (they trap it), and Python would never see a SIGTERM.
    func stop() {
        if server.isRunning {
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
    }

    /// Serves a directory over TLS on a port the kernel picks, and prints its origin as the first line.
    private static let serverScript = """
        import functools, http.server, ssl, sys
        root, cert, key = sys.argv[1:4]
        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=root))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        print(f"https://127.0.0.1:{server.server_address[1]}", flush=True)
        server.serve_forever()
        """

    private static func tool(_ name: String) throws -> String {
        guard let path = RepositoryFiles.tool(name) else { throw TestFailure("\(name) is not installed") }
        return path
    }

    private static func run(_ executable: String, _ arguments: [String], in directory: String) throws {
        let (status, output) = try RepositoryFiles.run(executable, arguments, directory: directory)
        guard status == 0 else { throw TestFailure("\(executable) \(arguments.joined(separator: " ")) exited \(status): \(output)") }
    }
}
