import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Expands a path setting the way a shell expands an unquoted word: a leading `~` (the home directory) or
/// `~user` (that user's), and `$NAME` or `${NAME}` anywhere. A value from the environment or the config file
/// has met no shell (`dir = ~/emoji` in the file, `Environment=EMOJIART_SYNC_DIR=~/emoji` in a unit), so it
/// would otherwise name `./~/emoji`. A variable that is not set is an error rather than the shell's empty
/// word: `$EMOJI/x` must not become `/x`.
enum PathExpansion {
    /// Why a path could not be expanded.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// `path` with `~`, `~user`, `$NAME` and `${NAME}` replaced; `environment` supplies the variables and
    /// `HOME` (the password database's home directory when `HOME` is unset or empty).
    static func expand(_ path: String, environment: [String: String]) throws(Failure) -> String {
        try expandVariables(expandTilde(path, environment: environment), environment: environment)
    }

    /// Only the leading `~` or `~user`: what a shell leaves unexpanded in `--dir=~/emoji`.
    static func expandTilde(_ path: String, environment: [String: String]) throws(Failure) -> String {
        guard path.hasPrefix("~") else { return path }
        let slash = path.firstIndex(of: "/") ?? path.endIndex
        let user = String(path[path.index(after: path.startIndex)..<slash])
        let home: String
        if user.isEmpty {
            guard let found = environment["HOME"].flatMap({ $0.isEmpty ? nil : $0 }) ?? homeDirectory(ofUser: nil) else {
                throw Failure(description: "cannot expand ~ in \"\(path)\": HOME is not set")
            }
            home = found
        } else {
            guard let found = homeDirectory(ofUser: user) else {
                throw Failure(description: "cannot expand ~\(user) in \"\(path)\": no such user")
            }
            home = found
        }
        // `~/` under a home of `/` must not become `//`.
        let rest = path[slash...]
        return home.hasSuffix("/") && rest.hasPrefix("/") ? String(home.dropLast()) + rest : home + rest
    }

    /// `$NAME` and `${NAME}` (NAME: a letter or `_`, then letters, digits, `_`). A `$` followed by anything
    /// else is kept as it is.
    static func expandVariables(_ path: String, environment: [String: String]) throws(Failure) -> String {
        guard path.contains("$") else { return path }
        var result = ""
        var rest = Substring(path)
        while let dollar = rest.firstIndex(of: "$") {
            result += rest[..<dollar]
            var after = rest[rest.index(after: dollar)...]
            let braced = after.first == "{"
            if braced { after = after.dropFirst() }
            let name = after.prefix { $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }
            guard let first = name.first, !first.isNumber, !braced || after.dropFirst(name.count).first == "}" else {
                result += "$"
                rest = rest[rest.index(after: dollar)...]
                continue
            }
            guard let value = environment[String(name)] else {
                throw Failure(description: "cannot expand $\(name) in \"\(path)\": it is not set")
            }
            result += value
            rest = after.dropFirst(name.count + (braced ? 1 : 0))
        }
        return result + rest
    }

    /// The password database's home directory of `user` (of this process's user when nil).
    static func homeDirectory(ofUser user: String?) -> String? {
        var buffer = [CChar](repeating: 0, count: 16_384)
        return buffer.withUnsafeMutableBufferPointer { storage -> String? in
            guard let base = storage.baseAddress else { return nil }
            var entry = passwd()
            var found: UnsafeMutablePointer<passwd>?
            let status = user.map { getpwnam_r($0, &entry, base, storage.count, &found) }
                ?? getpwuid_r(getuid(), &entry, base, storage.count, &found)
            // pw_dir points into `storage`, so it is read before the closure returns.
            guard status == 0, found != nil, let directory = entry.pw_dir else { return nil }
            return String(cString: directory)
        }
    }
}
