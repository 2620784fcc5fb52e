@testable import EmojiArtSync
import POSIXThreads
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `FileStatus.at` (Storage/FileStatus.swift) against real files: nothing there (absent, or a path under a
/// file: `ENOTDIR`) is nil; a regular file, a symbolic link (never followed) and a FIFO are told apart by the
/// fingerprint and occupant views; any other failure (`EACCES`, `ELOOP`) is thrown, never read as absent.
@Suite(.timeLimit(.minutes(1)))
struct FileStatusTests {
    @Test func nothingThereIsNil() throws {
        let dir = TemporaryDirectory("status-absent")
        #expect(try FileStatus.at(dir.file("missing.png")) == nil)
        try writeBytes(Array("x".utf8), to: dir.file("file"))
        #expect(try FileStatus.at(dir.file("file") + "/under.png") == nil, "ENOTDIR reads as nothing there")
    }

    @Test func aRegularFileHasAFingerprintAndIsARegularOccupant() throws {
        let dir = TemporaryDirectory("status-regular")
        let path = dir.file("a.png")
        try writeBytes(Array("12345".utf8), to: path)
        let status = try #require(try FileStatus.at(path))
        let fingerprint = try #require(status.fingerprint)
        #expect(fingerprint.size == 5 && fingerprint.identity == status.identity)
        #expect(status.occupant.kind == .regular && status.links == 1)
        #expect(status.occupant.refusal(owned: false) == nil)
    }

    @Test func aSymbolicLinkIsNotFollowed() throws {
        let dir = TemporaryDirectory("status-link")
        try writeBytes(Array("target".utf8), to: dir.file("target"))
        #expect(symlink(dir.file("target"), dir.file("link.png")) == 0)
        let status = try #require(try FileStatus.at(dir.file("link.png")))
        #expect(status.fingerprint == nil)
        #expect(status.occupant.kind == .symbolicLink)
        let target = try #require(try FileStatus.at(dir.file("target")))
        #expect(status.identity != target.identity)
    }

    /// The warm path's batch of looks (`DiskStorage.fingerprints(of:in:)`), by each key's file name in place,
    /// relative to DIR's descriptor: a regular file's fingerprint is the one `FileStatus.at` gives its path; a
    /// link, a FIFO and nothing there give no hint.
    @Test func aBatchOfLooksByKeyFindsTheRegularFilesOnly() throws {
        let dir = TemporaryDirectory("status-batch")
        let keys = try (1...4).map { try AssetKey(feedURL: "/gallery/image/\($0).png") }
        try writeBytes(Array("1234".utf8), to: dir.file(keys[0].fileName))
        #expect(symlink(dir.file(keys[0].fileName), dir.file(keys[1].fileName)) == 0)
        #expect(mkfifo(dir.file(keys[2].fileName), 0o644) == 0)
        let descriptor = open(dir.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        let found = DiskStorage.fingerprints(of: keys, in: descriptor)
        let expected = try #require(try FileStatus.at(dir.file(keys[0].fileName))?.fingerprint)
        #expect(found == [expected, nil, nil, nil])
        #expect(found[0]?.size == 4)
    }

    @Test func aFIFOIsNeverAFingerprint() throws {
        let dir = TemporaryDirectory("status-fifo")
        #expect(mkfifo(dir.file("pipe.png"), 0o644) == 0)
        let status = try #require(try FileStatus.at(dir.file("pipe.png")))
        #expect(status.fingerprint == nil)
        #expect(status.occupant.kind == .fifo && status.occupant.refusal(owned: true) == "a FIFO")
    }

    /// A link loop in the path: `ELOOP` is an error, thrown with the call, the errno and the path.
    @Test func aLinkLoopIsThrown() throws {
        let dir = TemporaryDirectory("status-loop")
        #expect(symlink("loop", dir.file("loop")) == 0)
        let path = dir.file("loop") + "/a.png"
        #expect(throws: SyncError.self) { try FileStatus.at(path) }
        do {
            _ = try FileStatus.at(path)
        } catch {
            #expect(error.call == "fstatat" && error.errnoValue == ELOOP && error.path == path)
        }
    }

    /// A directory without search permission: `EACCES` is thrown. Root passes permission checks, so as root the
    /// look is made on a thread of its own whose file-system user is `nobody` (`setfsuid`, per thread).
    @Test func aDirectoryWithoutSearchPermissionIsThrown() throws {
        let dir = TemporaryDirectory("status-eacces")
        #expect(mkdir(dir.file("closed"), 0o755) == 0)
        try writeBytes(Array("x".utf8), to: dir.file("closed/a.png"))
        #expect(chmod(dir.file("closed"), 0o000) == 0)
        defer { _ = chmod(dir.file("closed"), 0o755) }
        let path = dir.file("closed/a.png")
        let failure = try Self.withoutRootFileAccess { () -> SyncError? in
            do throws(SyncError) {
                _ = try FileStatus.at(path)
                return nil
            } catch {
                return error
            }
        }
        let error = try #require(failure, "a look into a closed directory read as an answer")
        #expect(error.call == "fstatat" && error.errnoValue == EACCES && error.path == path)
    }

    /// Runs `body` where permissions apply: here when not root, else on a new thread with file-system uid 65534.
    private static func withoutRootFileAccess<T: Sendable>(_ body: @escaping @Sendable () -> T) throws -> T {
        guard geteuid() == 0 else { return body() }
        typealias SetFSUID = @convention(c) (UInt32) -> Int32
        // setfsuid is in <sys/fsuid.h>, outside Swift's Glibc module; the test finds it in the C library.
        let handle = try #require(dlopen(nil, RTLD_NOW))
        defer { _ = dlclose(handle) }
        let setfsuid = unsafeBitCast(try #require(dlsym(handle, "setfsuid")), to: SetFSUID.self)
        let result = Mutex<T?>(nil)
        let thread = try JoinableThread.start(name: "fsuid-test") {
            _ = setfsuid(65534)  // the kernel drops CAP_DAC_OVERRIDE for this thread while its fsuid is not 0
            let value = body()
            _ = setfsuid(0)
            result.withLock { $0 = value }
        }
        thread.join()
        return try #require(result.withLock { $0 })
    }
}
