// Times logging N lines through LogSink: `LogWriteBench FILE N [stderr]`. Built by contrib/bench/log-write.sh
// with the Logging sources of the tree being measured (no SwiftPM); `-D BUFFERED` where the sink buffers.
// Prints how long the N write(line:) calls took on the calling thread (what a logger on the SyncActor pays),
// the time until every line is in the file, and the process's CPU time (all threads, getrusage).
import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#endif

@main
enum LogWriteBench {
    static func main() throws {
        let arguments = CommandLine.arguments
        guard arguments.count >= 3, let count = Int(arguments[2]) else {
            FileHandle.standardError.write(Data("usage: LogWriteBench FILE N [stderr]\n".utf8))
            exit(64)
        }
        let sink = try LogSink(path: arguments[1], alsoStandardError: arguments.count > 3)
        // A line as the agent writes one per memory hit, formatted once: the formatting is the same either way.
        let line = LogfmtFormatter.line(
            timestamp: Date(), level: .info, message: "asset ready",
            metadata: ["event": "asset", "hit": "memory", "key": "/gallery/image/12345.png", "file": "gallery_image_12345_png.png"])
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<count { sink.write(line: line) }
        let calls = start.duration(to: clock.now)
        #if BUFFERED
        sink.flush()
        #endif
        let written = start.duration(to: clock.now)
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        let milliseconds = { (duration: Duration) in
            String(format: "%.1f", Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15)
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: arguments[1])[.size] as? Int) ?? 0
        print("\(count) lines of \(line.utf8.count + 1) bytes: calls \(milliseconds(calls)) ms, in the file after \(milliseconds(written)) ms, CPU \(String(format: "%.0f", cpu * 1000)) ms, file \(size) bytes")
    }
}
