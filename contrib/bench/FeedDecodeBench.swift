// Times one decoder over a feed file: `FeedDecodeBench new|old|read FILE [RUNS]`. Built by
// contrib/bench/feed-decode.sh together with the Feed sources (not by SwiftPM), optimised, without sanitizers.
//   new   GalleryFeed.decode (the streaming FeedReader the agent uses)
//   old   GalleryFeed.decodeWithJSONDecoder (JSONDecoder into [FeedItem], the agent's decoder before)
//   read  only reads the file: the baseline of the peak RSS the other two add to
// Prints the minimum and median wall time of RUNS decodes and the process's peak RSS (getrusage).
import Foundation

#if canImport(Glibc)
import Glibc
#endif

@main
enum FeedDecodeBench {
    static func main() throws {
        let arguments = CommandLine.arguments
        guard arguments.count >= 3, ["new", "old", "read"].contains(arguments[1]) else {
            FileHandle.standardError.write(Data("usage: FeedDecodeBench new|old|read FILE [RUNS]\n".utf8))
            exit(64)
        }
        let mode = arguments[1]
        let body = [UInt8](try Data(contentsOf: URL(fileURLWithPath: arguments[2])))
        let runs = arguments.count > 3 ? Int(arguments[3]) ?? 5 : 5
        var times: [Duration] = []
        var summary = "read \(body.count) bytes"
        if mode != "read" {
            for _ in 0..<runs {
                let clock = ContinuousClock()
                let start = clock.now
                let feed = try mode == "new" ? GalleryFeed.decode(body) : GalleryFeed.decodeWithJSONDecoder(body)
                times.append(start.duration(to: clock.now))
                summary = "\(feed.entries.count) entries, \(feed.uniqueKeys.count) unique, \(feed.rejections.count) refused"
            }
        }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let sorted = times.sorted()
        let milliseconds = { (duration: Duration) in
            String(format: "%.1f", Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15)
        }
        let timing = sorted.isEmpty ? "" : " min \(milliseconds(sorted[0])) ms, median \(milliseconds(sorted[sorted.count / 2])) ms over \(runs) runs,"
        print("\(mode):\(timing) peak RSS \(usage.ru_maxrss / 1024) MiB (\(summary))")
    }
}
