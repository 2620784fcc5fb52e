import CShims
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A fetched body's file, written and waiting to be put at its path in DIR: a file with no name yet (`O_TMPFILE`),
/// reached through the descriptor it was written with, or a named file in the state directory's `tmp/`.
///
/// An unnamed file is what a body held whole in its write buffer becomes (most images): it costs no entry in `tmp/`
/// (no create there, no lookup and removal there at the rename, no contention for `tmp/`'s lock between the pool's
/// creates and the silo's renames), it is linked straight into DIR (`linkat`, which like `RENAME_NOREPLACE` never
/// replaces what is at the path), it may be made while DIR is being emptied (no name for `rm -rf` to trip over), and
/// it vanishes by itself if the process dies. Each holds a descriptor until it is placed, so they are rationed
/// (`UnnamedFileBudget`); past the ration, on a file system without them, and for a body that outgrew the buffer,
/// the file is named.
///
/// Owns its file until it is placed: discarded or dropped before that, a named file is unlinked and an unnamed one
/// closed (and so gone).
final class StagedFile: Sendable {
    private struct State {
        /// The named file's path; nil for an unnamed file.
        var path: String?
        /// The unnamed file's descriptor; -1 for a named file, and once placed or discarded.
        var descriptor: Int32
        /// Placed (renamed or linked to its final name) or discarded: nothing left to clean up.
        var done = false
    }

    private let state: Mutex<State>
    /// The ration an unnamed file took, given back when it is closed.
    private let budget: UnnamedFileBudget?
    /// Which file it is (taken from the descriptor it was written through): what the committer records as the
    /// agent's file once it is at its path.
    let identity: FileIdentity
    /// Whether the file was made with no name (`O_TMPFILE`).
    let isUnnamed: Bool

    /// A named file at `path`, written through a descriptor since closed.
    init(path: String, identity: FileIdentity) {
        state = Mutex(State(path: path, descriptor: -1))
        self.identity = identity
        isUnnamed = false
        budget = nil
    }

    /// An unnamed file, open as `descriptor`: this file owns it, and the ration it took from `budget`.
    init(unnamed descriptor: Int32, identity: FileIdentity, budget: UnnamedFileBudget) {
        state = Mutex(State(path: nil, descriptor: descriptor))
        self.identity = identity
        isUnnamed = true
        self.budget = budget
    }

    deinit {
        discard()
    }

    /// The named file's path while it is staged (nil for an unnamed one): for tests.
    var path: String? { state.withLock { $0.path } }

    /// A path that reads the file while it is staged: its own, or `/proc/self/fd/N` for an unnamed one. For tests.
    var readablePath: String { state.withLock { $0.path ?? "/proc/self/fd/\($0.descriptor)" } }

    /// Removes the file (a named one) or closes it (an unnamed one: gone with its descriptor), unless it was placed.
    func discard() {
        state.withLock { state in
            guard !state.done else { return }
            state.done = true
            release(&state)
            if let path = state.path { unlink(path) }
        }
    }

    /// Makes the file's bytes durable (`fsync`). Nil, or the error.
    func flush() -> SyncError? {
        state.withLock { state in
            if state.descriptor >= 0 {
                return fsync(state.descriptor) == 0
                    ? nil : SyncError.system("fsync", path: state.path ?? "", errno: errno, hint: "cannot flush the asset to disk")
            }
            guard let path = state.path else { return SyncError(.system, "a staged file was flushed after it was placed") }
            let fd = open(path, O_WRONLY | O_CLOEXEC)
            if fd < 0 { return SyncError.system("open", path: path, errno: errno, hint: "cannot flush the asset to disk") }
            defer { close(fd) }
            return fsync(fd) == 0 ? nil : SyncError.system("fsync", path: path, errno: errno, hint: "cannot flush the asset to disk")
        }
    }

    /// A file put at its path.
    struct Placement {
        /// Its fingerprint as placed, when known without a look at the path: a linked file's, read from its
        /// descriptor right after the link (a link changes the file's ctime, so it is read after it).
        let fingerprint: FileFingerprint?
    }

    /// Puts the file at `name` relative to the directory descriptor `directory` (or at the path `name` with
    /// `AT_FDCWD`) if nothing is there: `renameat2(RENAME_NOREPLACE)` for a named file, `linkat` for an unnamed one.
    /// The placement once placed; nil, with the file discarded, when the path is occupied (`EEXIST`). Any other
    /// failure throws, with the file discarded too (`shownAs` names the target in the message).
    func placeIfAbsent(in directory: Int32, as name: String, shownAs target: String) throws(SyncError) -> Placement? {
        // The placement, or the failed call's errno.
        let outcome: (placement: Placement?, errno: Int32) = state.withLock { state in
            guard !state.done else { return (nil, ENOENT) }
            if let path = state.path {
                guard emojiart_rename_noreplace(AT_FDCWD, path, directory, name) == 0 else { return (nil, errno) }
                state.path = nil  // renamed away: nothing of it is left to unlink
                return (Placement(fingerprint: nil), 0)
            }
            guard emojiart_link_unnamed_file(state.descriptor, directory, name) == 0 else { return (nil, errno) }
            var info = stat()
            return (Placement(fingerprint: fstat(state.descriptor, &info) == 0 ? FileFingerprint(regular: info) : nil), 0)
        }
        discard()  // placed: only closes the descriptor; refused: removes the file
        if let placement = outcome.placement { return placement }
        if outcome.errno == EEXIST { return nil }
        throw SyncError.system(
            isUnnamed ? "linkat" : "renameat2", path: target, errno: outcome.errno, hint: "cannot move the asset into place")
    }

    /// Gives the file the name `path` (in the same file system; whatever has that name is replaced), and hands it
    /// over: from then on it is the caller's, at `path`. A rename for a named file, a link for an unnamed one. On a
    /// failure the file is discarded and the error thrown.
    func move(to path: String) throws(SyncError) {
        let failure: SyncError? = state.withLock { state in
            guard !state.done else { return SyncError(.system, "a staged file was moved after it was placed", path: path) }
            if let from = state.path {
                if rename(from, path) == 0 {
                    state.path = nil
                    return nil
                }
                return SyncError.system("rename", path: path, errno: errno, hint: "cannot move the asset into place")
            }
            return emojiart_link_unnamed_file(state.descriptor, AT_FDCWD, path) == 0
                ? nil : SyncError.system("linkat", path: path, errno: errno, hint: "cannot move the asset into place")
        }
        discard()
        if let failure { throw failure }
    }

    private func release(_ state: inout State) {
        guard state.descriptor >= 0 else { return }
        close(state.descriptor)
        state.descriptor = -1
        budget?.release()
    }
}

/// How many unnamed staged files (`StagedFile`) may be open at once in this process: each holds a descriptor from
/// its write until its commit, and a cold pass has up to a window of them waiting. A quarter of the descriptors the
/// process may open at start (`RLIMIT_NOFILE`'s soft limit) beyond the first 256, at most 4,096, so the files
/// waiting never take the descriptors transfers, the index and the log need; past it, bodies go to named files as
/// before. The ration is taken before the file is opened and given back when it is closed.
final class UnnamedFileBudget: Sendable {
    static let shared = UnnamedFileBudget(limit: UnnamedFileBudget.limitFromResourceLimit())

    let limit: Int
    private let taken = Atomic<Int>(0)

    init(limit: Int) {
        self.limit = limit
    }

    /// Takes one file's ration; false when none is left.
    func take() -> Bool {
        if taken.wrappingAdd(1, ordering: .relaxed).newValue <= limit { return true }
        taken.wrappingSubtract(1, ordering: .relaxed)
        return false
    }

    /// Gives one file's ration back.
    func release() {
        taken.wrappingSubtract(1, ordering: .relaxed)
    }

    /// Unnamed files open now.
    var inUse: Int { taken.load(ordering: .relaxed) }

    private static func limitFromResourceLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        let soft = UInt64(limit.rlim_cur)  // RLIM_INFINITY is the largest value: no limit
        return Int(min(4096, soft > 256 ? (soft - 256) / 4 : 0))
    }
}
