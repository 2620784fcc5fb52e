import EmojiArtPNG

#if canImport(Glibc)
import Glibc
#endif

/// What one read of a file in DIR found: its size, its SHA-256 and its PNG facts, learnt in one pass through fixed
/// buffers (`PNGValidator.validate(file:...)`, hashing each block as it passes), so a file of any size is checked
/// in the same few hundred KiB of memory. The read-back of a file whose fingerprint changed, the scrub, and the
/// adoption of a file that may hold the agent's bytes all read through it. Blocking: run it on io.
struct CheckedFile: Sendable {
    let size: Int
    /// Lowercase hex SHA-256 of the bytes.
    let sha256: String
    let info: PNGInfo

    /// Reads the regular file at `path` (no link followed, nothing but a regular file: `DiskStorage.openRegularFile`)
    /// and checks it as a PNG at `level`. Throws the open's error (`ENOENT`, `.conflict` for what is not a regular
    /// file), a failed read as a `.system` error (nothing is known of the bytes), and a PNG defect as an
    /// `.invalidImage` error whose underlying error is the `PNGDefect`.
    static func read(at path: String, level: PNGVerification = .structure) throws(SyncError) -> CheckedFile {
        let (fd, size) = try DiskStorage.openRegularFile(at: path)
        defer { close(fd) }
        var digest = SHA256Digest()
        let info: PNGInfo
        do throws(PNGFileFailure) {
            info = try PNGValidator.validate(file: fd, size: size, level: level) { digest.update(UnsafeRawBufferPointer($0)) }
        } catch {
            switch error {
            case .defect(let defect):
                throw SyncError(.invalidImage, "\(path) is not a valid PNG: \(defect)", path: path, underlying: defect)
            case .unreadable(let call, let code):
                throw SyncError.system(call, path: path, errno: code, hint: "cannot read the file")
            }
        }
        return CheckedFile(size: size, sha256: SHA256Digest.hexString(digest.finalize()), info: info)
    }
}
