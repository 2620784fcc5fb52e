import CShims
import CurlHTTP
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One body on its way to disk: a new temporary file in the sync directory's temporary folder, written through a
/// bounded buffer and hashed (SHA-256) as the bytes come, on the HTTP client's loop thread (an `HTTPBodySink`).
/// Memory per transfer is the buffer, whatever the body's size.
///
/// The file is made when the body is first written out: once it outgrows the buffer, or when it is stored (``storeUnnamed(flushing:)``, ``storeNamed()``) for one held
/// whole (most images fit the buffer), never when the request starts. So an answer that is an error (a 500, a 429,
/// a 304) or a small body that is no PNG (checked from memory first) makes no file and costs no create and unlink,
/// and a file made before DIR turned read-only cannot be left behind by an error answer that comes after. A sink
/// made with `mayMakeFile` asks it first: a body that outgrows the buffer while the answer is no fails instead of
/// making the file (the caller waits for the answer to turn before storing it).
///
/// Owns the file until it is stored; until then, and whenever it is dropped before (a transfer that failed, was cut
/// short or was cancelled, a body that is no PNG), the file is removed: no temporary file outlives a failure. Its state sits behind a `Mutex` because the loop thread writes and the fetching task finishes.
final class StreamedBodyFile: HTTPBodySink {
    /// What a finished body is: how long, its digest, and where.
    struct Finished: Sendable {
        /// The file, when the body outgrew the buffer; nil for a body held whole (no file made yet).
        let path: String?
        let size: Int
        /// Lowercase hex SHA-256 of the bytes (empty when the body was not hashed).
        let sha256: String
        /// The whole body, when it never outgrew the buffer: it is checked from memory, and written to its file in
        /// one piece when it is stored. Nil for a larger body, which is checked from its file.
        let bytes: [UInt8]?
    }

    /// The buffer in front of `write(2)`: a few of libcurl's receive buffers, so a file of any size costs a
    /// system call per quarter mebibyte.
    static let bufferSize = 256 * 1024

    private struct State: ~Copyable {
        /// -1 until the body is first written out (it outgrew the buffer, or it is stored), and again once closed.
        var fd: Int32 = -1
        /// The file's path, once made.
        var path: String?
        var buffer: [UInt8]
        var size = 0
        var digest = SHA256Digest()
        var failure: String?
        var handedOn = false
    }

    /// The temporary folder the file is made in.
    let folder: TemporaryFolder
    private let state: Mutex<State>

    /// Whether the bytes are hashed as they come (an image's are; a feed's need not be).
    private let hashing: Bool
    /// Asked, on the transfer's thread, before the file is made while the body is still arriving; nil: always yes.
    private let mayMakeFile: (@Sendable () -> Bool)?
    /// The ration of unnamed files a body held whole may take one of (`storeUnnamed(flushing:)`).
    private let unnamedFiles: UnnamedFileBudget

    /// A body that will be written into a new file in `folder` once it outgrows the buffer or is finished;
    /// `hashing: false` leaves `Finished.sha256` empty. `mayMakeFile` (the `RenameGate`'s `isOpen`) is asked before
    /// a body that outgrows the buffer makes its file.
    init(
        in folder: TemporaryFolder, hashing: Bool = true, mayMakeFile: (@Sendable () -> Bool)? = nil,
        unnamedFiles: UnnamedFileBudget = .shared
    ) {
        self.folder = folder
        self.hashing = hashing
        self.mayMakeFile = mayMakeFile
        self.unnamedFiles = unnamedFiles
        state = Mutex(State(buffer: []))
    }

    deinit {
        state.withLock { state in
            if state.fd >= 0 { close(state.fd) }
            if !state.handedOn, let path = state.path { unlink(path) }
        }
    }

    /// Makes the file, once; false, with the failure kept, when it cannot be made.
    private func makeFile(_ state: inout State) -> Bool {
        guard state.path == nil else { return state.fd >= 0 }
        do {
            let (fd, path) = try DiskStorage.createTemporaryFile(in: folder)
            (state.fd, state.path) = (fd, path)
            return true
        } catch {
            state.failure = error.message
            return false
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        // The chunk goes in as an address and a count: a pointer is not `Sendable`, and the lock's region
        // checking would otherwise tie the state to it. It is only read, inside this call, as libcurl allows.
        let (address, count) = (UInt(bitPattern: bytes.baseAddress), bytes.count)
        return state.withLock { state in
            let chunk = UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: address), count: count)
            guard state.failure == nil else { return false }
            if hashing { state.digest.update(chunk) }
            state.size += chunk.count
            // The buffer grows as bytes come, up to `bufferSize`: most images are far smaller than it.
            if state.buffer.count + chunk.count <= Self.bufferSize, chunk.count < Self.bufferSize {
                state.buffer.append(contentsOf: chunk)
                return true
            }
            if state.path == nil, let mayMakeFile, !mayMakeFile() {
                state.failure = "the body outgrew its \(Self.bufferSize / 1024) KiB buffer while deletions in DIR held new files back (DIR may be being emptied: nothing is made in its state directory then)"
                return false
            }
            guard makeFile(&state), Self.flush(&state) else { return false }
            if chunk.count >= Self.bufferSize {
                return Self.writeAll(chunk, &state)
            }
            state.buffer.append(contentsOf: chunk)
            return true
        }
    }

    /// Removes the file now, if it was made and not handed on: a failed body leaves nothing behind by the time
    /// the failure is reported. (Waiting for `deinit` is not enough: the HTTP client's loop thread may still
    /// hold the sink for a moment after the request has ended.)
    func discard() {
        state.withLock { state in
            state.buffer = []  // its capacity too: a group fetch keeps its sinks until the group ends
            if state.fd >= 0 {
                close(state.fd)
                state.fd = -1
            }
            if !state.handedOn, let path = state.path {
                unlink(path)
                state.handedOn = true  // nothing left for `deinit` to remove
            }
        }
    }

    /// Whether a write to the file failed (it could not be made, the disk is full, DIR turned read-only).
    var couldNotStore: Bool {
        state.withLock { $0.failure != nil }
    }

    var failureDescription: String {
        state.withLock { $0.failure ?? "the body's temporary file is closed" }
    }

    /// Ends the body: its size and digest, and either the whole body (it never outgrew the buffer: no file is made
    /// yet, storing it makes it) or the path of its file (written out, still open and this sink's). A body that is
    /// no PNG is found so before any file is made, and dropped with its sink, file and all.
    func finish() throws(SyncError) -> Finished {
        let outcome = state.withLock { state -> Result<Finished, SyncError> in
            if state.path != nil, state.failure == nil { _ = Self.flush(&state) }
            if let failure = state.failure {
                let path = state.path ?? folder.path
                return .failure(SyncError(.system, "cannot write \(path): \(failure)", path: path))
            }
            var digest = SHA256Digest()
            swap(&digest, &state.digest)
            let sha256 = hashing ? SHA256Digest.hexString(digest.finalize()) : ""
            // Held whole: the bytes are handed back and stay in the buffer (shared, not copied) until it is stored.
            let whole = state.path == nil ? state.buffer : nil
            return .success(Finished(path: state.path, size: state.size, sha256: sha256, bytes: whole))
        }
        return try outcome.get()
    }

    /// A new descriptor of the finished body's file, for reading and writing, opened through the descriptor it was
    /// written with (`/proc/self/fd/N`): the file this sink wrote, whatever has its name in the temporary folder
    /// now. The caller owns it. For a body that went to a file (``Finished/path`` not nil), before it is stored.
    func reopenFinishedFile() throws(SyncError) -> Int32 {
        let outcome = state.withLock { state -> Result<Int32, SyncError> in
            let path = state.path ?? folder.path
            guard state.fd >= 0 else { return .failure(SyncError(.system, "\(path) is not open", path: path)) }
            let fd = open("/proc/self/fd/\(state.fd)", O_RDWR | O_CLOEXEC)
            guard fd >= 0 else {
                return .failure(SyncError.system("open", path: path, errno: errno, hint: "cannot read the feed's temporary file"))
            }
            return .success(fd)
        }
        return try outcome.get()
    }

    /// Puts the finished body in a new named file in the temporary folder (made now, in one write, for a body held
    /// whole; a body that outgrew the buffer is in its file already), closes it and hands it on as a `StagedFile`,
    /// with its identity taken from the descriptor it was written through (`fstat`), which the committer records as
    /// the agent's once it is at its path, without looking the path up again. Not flushed: the committer flushes a
    /// batch at once. Only a valid body gets here, so an answer that is no image makes no file. A body held whole
    /// goes to an unnamed file first when it can (``storeUnnamed(flushing:)``; `AssetFetcher.stage` decides).
    func storeNamed() throws(SyncError) -> StagedFile {
        let outcome = state.withLock { state -> Result<StagedFile, SyncError> in
            if state.failure == nil, state.path == nil, makeFile(&state) {
                // Written in one piece, then dropped: `finish()` handed the same bytes out, so clearing the buffer
                // in place would copy it.
                _ = state.buffer.withUnsafeBytes { Self.writeAll($0, &state) }
                state.buffer = []
            }
            let path = state.path ?? folder.path
            if let failure = state.failure {
                return .failure(SyncError(.system, "cannot write \(path): \(failure)", path: path))
            }
            guard state.fd >= 0 else { return .failure(SyncError(.system, "\(path) is not open: stored already", path: path)) }
            let identity = Self.identityClosing(&state, path: path)
            // The buffer's capacity goes too (a body that outgrew it kept it for its writes): a group fetch keeps
            // its sinks until the group ends (`GroupFetch`).
            state.buffer = []
            return identity.map { identity in
                state.handedOn = true
                return StagedFile(path: path, identity: identity)
            }
        }
        return try outcome.get()
    }

    /// The file's identity from its descriptor (`fstat`), and the descriptor closed; a failure of either is the
    /// error.
    private static func identityClosing(_ state: inout State, path: String) -> Result<FileIdentity, SyncError> {
        let looked = Result { () throws(SyncError) in try FileStatus.of(descriptor: state.fd, path: path) }
        let closed = close(state.fd) == 0
            ? nil : SyncError.system("close", path: path, errno: errno, hint: "cannot write the asset")
        state.fd = -1
        if let closed { return .failure(closed) }
        return looked.map(\.identity)
    }

    /// A body held whole, written into a file with no name (`O_TMPFILE`) in the temporary folder, flushed too
    /// when `flushing`: the `StagedFile` that holds it. Nil, having made nothing and kept the bytes, for a body that
    /// went to a named file, when the process's ration of unnamed files is used up (`UnnamedFileBudget`), or where
    /// the file system or kernel has none. Blocking.
    func storeUnnamed(flushing: Bool) throws(SyncError) -> StagedFile? {
        let folder = folder
        let outcome = state.withLock { state -> Result<StagedFile?, SyncError> in
            guard state.failure == nil, state.path == nil, state.fd < 0, !state.handedOn,
                Self.unnamedFilesUsable.load(ordering: .relaxed), unnamedFiles.take()
            else { return .success(nil) }
            let fd = emojiart_open_unnamed_file(folder.path)
            guard fd >= 0 else {
                let code = errno
                unnamedFiles.release()
                if code == EOPNOTSUPP || code == EISDIR || code == EINVAL {
                    Self.unnamedFilesUsable.store(false, ordering: .relaxed)  // this file system has none
                    return .success(nil)
                }
                return .failure(SyncError.system("open", path: folder.path, errno: code, hint: "cannot create a temporary file"))
            }
            var identity = FileIdentity(device: 0, inode: 0)
            var failure: SyncError?
            if let written = state.buffer.withUnsafeBytes({ bytes -> Int32? in
                do throws(SystemCallFailure) { try writeFully(fd, bytes); return nil } catch { return error.errno }
            }) {
                failure = SyncError.system("write", path: folder.path, errno: written, hint: "cannot write the asset (disk full?)")
            } else if flushing, fsync(fd) != 0 {
                failure = SyncError.system("fsync", path: folder.path, errno: errno, hint: "cannot flush the asset to disk")
            } else {
                do throws(SyncError) {
                    identity = try FileStatus.of(descriptor: fd, path: folder.path).identity
                } catch {
                    failure = error
                }
            }
            let file = StagedFile(unnamed: fd, identity: identity, budget: unnamedFiles)
            if let failure {
                file.discard()
                return .failure(failure)
            }
            state.buffer = []
            state.handedOn = true
            return .success(file)
        }
        return try outcome.get()
    }

    /// False once an unnamed file could not be made for want of support (`EOPNOTSUPP`, `EISDIR`, `EINVAL`): the
    /// process then makes named files only. Unnamed files are placed by a link through `/proc/self/fd` when the
    /// process may not link a descriptor directly, so they are used only where `/proc` is mounted.
    private static let unnamedFilesUsable = Atomic<Bool>(access("/proc/self/fd", F_OK) == 0)

    /// ``storeNamed()`` for a repair's body held whole while DIR's deletions keep the `RenameGate` shut, when no name may
    /// be made in the temporary folder (`rm -rf DIR` would trip over it): the bytes go into a file with no name
    /// (`O_TMPFILE`) and are flushed there and then, on the blocking-I/O pool, and the file is handed on once the gate
    /// opens, to be linked into DIR by the committer. So a lone deletion's quiet and its repair's flush overlap. The
    /// file handed on is durable (the committer need not flush it again).
    ///
    /// Returns nil, having made nothing, where no unnamed file can be made (see ``storeUnnamed(flushing:)``): the
    /// caller waits for the gate and calls ``storeNamed()``. Throws why DIR is gone, as the gate says.
    func storeFlushed(once gate: RenameGate) async throws(SyncError) -> StagedFile? {
        let written: Result<StagedFile?, SyncError> = await BlockingIO.run { [self] in
            do throws(SyncError) { return .success(try storeUnnamed(flushing: true)) } catch { return .failure(error) }
        }
        guard let file = try written.get() else { return nil }
        if let gone = await gate.waitUntilOpen() {
            file.discard()
            throw SyncError(.system, "\(folder.path) is being removed (\(gone)): the repair's file is not put back", path: folder.path)
        }
        return file
    }

    private static func flush(_ state: inout State) -> Bool {
        guard !state.buffer.isEmpty else { return true }
        let written = state.buffer.withUnsafeBytes { writeAll($0, &state) }
        state.buffer.removeAll(keepingCapacity: true)
        return written
    }

    private static func writeAll(_ bytes: UnsafeRawBufferPointer, _ state: inout State) -> Bool {
        do {
            try writeFully(state.fd, bytes)
            return true
        } catch {
            state.failure = "\(String(cString: strerror(error.errno))) (errno \(error.errno)): cannot write the asset (disk full?)"
            return false
        }
    }
}
