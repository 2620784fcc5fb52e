import CSQLite
import CShims
import CurlHTTP
import EmojiArtPNG

/// The version `--version` prints and the User-Agent carries.
public enum EmojiArtSyncVersion {
    public static let current = "0.1.0"

    /// The commit the binary was built from (`git describe --always --dirty` when the Makefile built it), or
    /// nil for a build that was not told (a plain `swift build`).
    static var commit: String? {
        let commit = String(cString: emojiart_build_commit())
        return commit.isEmpty ? nil : commit
    }

    /// What `--version` prints, as `curl --version` does: the program, its version and commit, then the
    /// libraries it runs with, as the running process found them (not the headers it was built against):
    ///
    ///     emojiart-sync 0.1.0 (commit 1a2b3c4)
    ///     libcurl/8.14.1 OpenSSL/3.5.1 zlib/1.3.1 ... libpng/1.6.48 SQLite/3.46.1
    public static func description(program: String) -> String {
        let commit = commit.map { "commit \($0)" } ?? "commit unknown: not built by make"
        return """
            \(program) \(current) (\(commit))
            \(CurlVersion.summary) libpng/\(LibPNGVersion.runtime) SQLite/\(String(cString: sqlite3_libversion()))
            """
    }
}
