import Foundation
import Glibc
import TestSupport
import Testing

@Suite("The emojiart-gallery executable", .timeLimit(.minutes(1)))
struct ExecutableTests {
    @Test("prints its URL as the first stdout line, serves, logs logfmt to stderr, and exits 0 on SIGTERM and SIGINT", arguments: [SIGTERM, SIGINT])
    func lifecycle(signal: Int32) async throws {
        let process = try ChildProcess(
            executable: try galleryExecutablePath(), ["--port", "0", "--count", "12", "--corrupt", "3", "--server-error", "all"])
        _ = await eventually { process.stdout.contains("\n") }
        let firstLine = try #require(process.stdout.split(separator: "\n").first.map(String.init), "no first line on stdout")
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

        process.signal(signal)
        #expect(await process.waitForExit() == 0)
        #expect(process.exited)
        let log = process.stderr
        #expect(log.contains("method=GET path=/gallery/images status=200 bytes=\(feed.body.count) fault=none"))
        #expect(log.contains("method=GET path=/gallery/image?3 status=200 bytes=\(corrupt.body.count) fault=corrupt"))
        #expect(log.contains("path=/gallery/image?1 status=500"))
        #expect(log.contains("fault=serverError"))
        #expect(log.contains("event=stopped"))
    }

    @Test("--help is clean and mentions every option and the control endpoints")
    func help() async throws {
        let outcome = try await ChildProcess.run(executable: try galleryExecutablePath(), ["--help"])
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
        let outcome = try await ChildProcess.run(executable: try galleryExecutablePath(), arguments)
        #expect(outcome.exited)
        #expect(outcome.status == 64, "stderr: \(outcome.stderr)")  // EX_USAGE
        #expect(outcome.stdout.isEmpty)
    }

    @Test("a port that is taken makes it exit non-zero with the reason on stderr")
    func portTaken() async throws {
        try await withGallery { _, baseURL in
            let port = try #require(URL(string: baseURL)?.port)
            let outcome = try await ChildProcess.run(executable: try galleryExecutablePath(), ["--port", String(port)])
            #expect(outcome.exited)
            #expect(outcome.status != 0)
            #expect(outcome.stdout.isEmpty)
            #expect(outcome.stderr.contains("bindFailed"))
        }
    }
}
