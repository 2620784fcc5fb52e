import EmojiArtSync
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The terminal as `status --watch` uses it, and the promise to give it back as it was: keys read one at a
/// time without echo (termios: `ICANON` and `ECHO` off; `ISIG` stays on, so Ctrl-C is a `SIGINT` the watch
/// traps), the alternate screen (`smcup`, `ESC [?1049h`), the cursor hidden (`ESC [?25l`).
///
/// `restore()` puts back the saved termios, shows the cursor and leaves the alternate screen; it is
/// idempotent, and the watch calls it on every way out (q, a signal, the agent gone, an error).
final class TerminalSession {
    private let descriptor: Int32
    private let saved: termios
    private var active = false

    /// Saves the terminal's settings; nil when `descriptor` is not a terminal.
    init?(descriptor: Int32 = STDIN_FILENO) {
        var settings = termios()
        guard isatty(descriptor) == 1, tcgetattr(descriptor, &settings) == 0 else { return nil }
        self.descriptor = descriptor
        self.saved = settings
    }

    /// Enters the watch's mode (again, after a suspend).
    func enter() {
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        // VMIN 1, VTIME 0: a read returns as soon as one key is there.
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(descriptor, TCSAFLUSH, &raw)
        Self.write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J")
        active = true
    }

    /// Gives the terminal back as it was found.
    func restore() {
        guard active else { return }
        active = false
        Self.write("\u{1B}[?25h\u{1B}[?1049l")
        var settings = saved
        tcsetattr(descriptor, TCSAFLUSH, &settings)
    }

    /// Draws `lines` from the top left, clearing what the last frame left beyond them.
    func draw(_ lines: [String]) {
        Self.write("\u{1B}[H" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\r\n") + "\u{1B}[J")
    }

    /// Columns and rows (`TIOCGWINSZ`); 80x24 when the terminal does not say.
    var size: (width: Int, height: Int) {
        var window = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0, window.ws_row > 0 else { return (80, 24) }
        return (Int(window.ws_col), Int(window.ws_row))
    }

    /// Writes all of `text` to stdout, unbuffered.
    static func write(_ text: String) {
        LogSink.writeAll(STDOUT_FILENO, Array(text.utf8))  // again after EINTR; a failure is let go
    }
}
