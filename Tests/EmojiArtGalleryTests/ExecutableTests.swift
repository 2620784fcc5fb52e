import Foundation
import Glibc
import TestSupport
import Testing

@Suite("The emojiart-gallery executable", .timeLimit(.minutes(1)))
struct ExecutableTests {
    @Test("prints its URL as the first stdout line, serves, logs logfmt to stderr, and exits 0 on SIGTERM and SIGINT", arguments: [SIGTERM, SIGINT])
    func lifecycle(signal: Int32) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try galleryExecutablePath())
        process.arguments = ["--port", "0", "--count", "12", "--corrupt", "3", "--server-error", "all"]
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stderr = PipeDrain(err.fileHandleForReading)

        let firstLine = try await onOwnThread { try readLine(out.fileHandleForReading) }
        let url = try #require(URL(string: firstLine))
        #expect(url.scheme == "http")
        #expect(url.host == "127.0.0.1")
        #expect((url.port ?? 0) > 0)

        let feed = try await fetch(firstLine, "/gallery/images")
        #expect(feed.status == 200)
        #expect(try JSONSerialization.jsonObject(with: Data(feed.body)) as? [Any] != nil)
        let corrupt = try await fetch(firstLine, "/gallery/image?3")
        #expect(try PNGInspection.chunks(corrupt.body).contains { !$0.crcMatches })
        #expect(try await fetch(firstLine, "/gallery/image?1").status == 500)

        kill(process.processIdentifier, signal)
        try await onOwnThread { process.waitUntilExit() }
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
        let log = String(decoding: stderr.finish(), as: UTF8.self)
        #expect(log.contains("method=GET path=/gallery/images status=200 bytes=\(feed.body.count) fault=none"))
        #expect(log.contains("method=GET path=/gallery/image?3 status=200 bytes=\(corrupt.body.count) fault=corrupt"))
        #expect(log.contains("path=/gallery/image?1 status=500"))
        #expect(log.contains("fault=serverError"))
        #expect(log.contains("event=stopped"))
    }

    @Test("--help is clean and mentions every option and the control endpoints")
    func help() async throws {
        let outcome = try await runProcess(try galleryExecutablePath(), ["--help"])
        #expect(outcome.exited && outcome.status == 0)
        for option in ["--host", "--port", "--count", "--latency-ms", "--corrupt", "--truncate", "--server-error",
                       "--endless", "--changing", "--slow", "--empty-feed", "/_control/stats", "/_control/faults"] {
            #expect(outcome.stdout.contains(option), "--help does not mention \(option)")
        }
    }

    @Test(
        "bad arguments exit with a usage error",
        arguments: [["--corrupt", "3", "--truncate", "3"], ["--corrupt", "all", "--endless", "all"], ["--port", "70000"], ["--corrupt", "x"], ["--corrupt", "0"]]
    )
    func usageErrors(arguments: [String]) async throws {
        let outcome = try await runProcess(try galleryExecutablePath(), arguments)
        #expect(outcome.exited)
        #expect(outcome.status == 64, "stderr: \(outcome.stderr)")  // EX_USAGE
        #expect(outcome.stdout.isEmpty)
    }

    @Test("a port that is taken makes it exit non-zero with the reason on stderr")
    func portTaken() async throws {
        try await withGallery { _, baseURL in
            let port = try #require(URL(string: baseURL)?.port)
            let outcome = try await runProcess(try galleryExecutablePath(), ["--port", String(port)])
            #expect(outcome.exited)
            #expect(outcome.status != 0)
            #expect(outcome.stdout.isEmpty)
            #expect(outcome.stderr.contains("bindFailed"))
        }
    }
}

/// Reads bytes up to the first newline (without it), blocking.
private func readLine(_ handle: FileHandle) throws -> String {
    var line: [UInt8] = []
    while true {
        guard let byte = try handle.read(upToCount: 1)?.first else {
            throw TestFailure("stdout closed before the first line; got \(String(decoding: line, as: UTF8.self))")
        }
        if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
        line.append(byte)
    }
}
