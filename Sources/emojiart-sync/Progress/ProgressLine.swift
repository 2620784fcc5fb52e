import EmojiArtSync
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The live progress line of `--once` on a terminal: owns the redraws on one file descriptor (stderr).
///
/// Fed `SyncProgress` values from any task (the engine calls `update` as accesses complete); draws at most
/// once per `minimumInterval` (100 ms: ten redraws a second), except the last value (done == total), which is
/// always drawn. Each draw is `\r`, the line, and erase-to-end-of-line, so the line is rewritten in place.
/// `finish` ends the line and writes the summary below it.
public final class ProgressLine: Sendable {
    private struct State {
        var lastDraw: ContinuousClock.Instant?
        var latest: SyncProgress?
        var drawn: SyncProgress?
    }

    private let fileDescriptor: Int32
    private let minimumInterval: Duration
    private let start = ContinuousClock.now
    private let state = Mutex(State())

    public init(fileDescriptor: Int32 = STDERR_FILENO, minimumInterval: Duration = .milliseconds(100)) {
        self.fileDescriptor = fileDescriptor
        self.minimumInterval = minimumInterval
    }

    /// Whether `fileDescriptor` is a terminal: the progress line is only for people watching.
    public static func isTerminal(_ fileDescriptor: Int32 = STDERR_FILENO) -> Bool {
        isatty(fileDescriptor) == 1
    }

    /// Takes a new value; redraws when the last draw is old enough or the pass is complete.
    public func update(_ progress: SyncProgress) {
        state.withLock { state in
            state.latest = progress
            let now = ContinuousClock.now
            let due = state.lastDraw.map { $0.duration(to: now) >= minimumInterval } ?? true
            guard due || progress.done >= progress.total else { return }
            draw(progress, now: now, &state)
        }
    }

    /// Draws the latest value if it was not drawn yet, ends the line, and writes `summary` on its own line.
    public func finish(summary: String) {
        state.withLock { state in
            if let latest = state.latest, latest != state.drawn {
                draw(latest, now: .now, &state)
            }
            write((state.drawn == nil ? "" : "\n") + summary + "\n")
        }
    }

    private func draw(_ progress: SyncProgress, now: ContinuousClock.Instant, _ state: inout State) {
        write("\r" + ProgressFormat.line(progress, elapsed: start.duration(to: now)) + "\u{1B}[K")
        state.lastDraw = now
        state.drawn = progress
    }

    private func write(_ text: String) {
        LogSink.writeAll(fileDescriptor, Array(text.utf8))
    }
}
