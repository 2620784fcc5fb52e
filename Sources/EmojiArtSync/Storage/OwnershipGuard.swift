import CShims
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The one place the agent replaces or removes a file at an asset path, and the rule it keeps there: only the
/// file the agent wrote (its recorded `FileIdentity`) is ever replaced or unlinked. Anything else is kept whole.
///
/// Nothing is decided from a look at the path followed by an act on the path (a person can swap the file in
/// between). Instead the file is first taken out of DIR in one atomic step, into `DIR/.emojiart-sync/taken/`,
/// and what was taken is looked at there, where nobody else writes:
/// - a replacement swaps the new file with whatever is at the path (`renameat2(RENAME_EXCHANGE)`: the path is
///   never empty), then unlinks what came out only if it is the agent's file, and otherwise moves it aside;
/// - a removal takes the file (`RENAME_NOREPLACE` into `taken/`), unlinks it only if it is the agent's file as
///   it was when the removal was decided, and otherwise puts it back (`RENAME_NOREPLACE`, or aside if its name
///   was taken meanwhile).
///
/// A person's file is moved aside to `NAME.conflict-YYYYMMDD-HHMMSS.png` beside it (`-2`, `-3`... if that exists),
/// always with `RENAME_NOREPLACE`: never over anything. Such a name can never be an asset's (asset names have no
/// `.` before `.png`). A file left in `taken/` by a crash is handed back to DIR at the next start (`returnHeldFiles`).
///
/// It keeps no state the silo owns (only a counter for unique names in `taken/`), so its system calls run where
/// the caller is: the committer's links and replacements and a removal's takes run on the I/O pool, off the silo.
/// What makes that safe is the rule above: every decision is made on a file already taken into `taken/`, against
/// an identity the caller read before, so whatever ran in the silo meanwhile can only make the guard keep a file.
final class OwnershipGuard: Sendable {
    let directory: SyncDirectory
    /// DIR's descriptor (`DiskStorage.descriptor`): every rename into or out of DIR names its entry relative to it,
    /// so a DIR that was removed or replaced by another folder never receives a file. -1: by path instead.
    private let directoryDescriptor: Int32
    private let status: PathStatus
    private let hooks: AgentTestHooks?
    /// Told of each name the guard takes out of DIR, so its event is not counted as a person's deletion.
    private let gate: RenameGate?
    /// Names given in `taken/` so far, for unique ones.
    private let taken = Atomic<Int>(0)

    init(
        directory: SyncDirectory, directoryDescriptor: Int32, status: PathStatus, gate: RenameGate?, hooks: AgentTestHooks?
    ) {
        self.directory = directory
        self.directoryDescriptor = directoryDescriptor
        self.status = status
        self.gate = gate
        self.hooks = hooks
    }

    /// A file taken out of DIR, held in `taken/`, with its status as it was taken.
    struct HeldFile: Sendable {
        let path: String
        /// The asset name it was taken from.
        let name: String
        let status: FileStatus

        var identity: FileIdentity { status.identity }
    }

    /// What a replacement came to.
    enum Replacement: Sendable, Equatable {
        /// The new file is at the path. `movedAside`: the name a file that was not the agent's was moved to.
        case installed(movedAside: String?)
        /// The path was emptied and then taken by someone else meanwhile: the new file was dropped.
        case occupied
    }

    /// Whether the file of identity `found` is the agent's own file the index records as `recorded`: unlinked when
    /// replaced or removed; anything else is moved aside (nil recorded: unknown, so never the agent's).
    static func isOwn(_ found: FileIdentity, recorded: FileIdentity?) -> Bool {
        recorded.map { $0 == found } ?? false
    }

    /// Puts the staged `file` at asset `name`, where a regular file sits and the index records the agent's file `own`
    /// (nil: unknown, so whatever is there is treated as someone else's): first named in `taken/` (renamed, or linked
    /// when it has no name), then swapped in. The agent's old file is unlinked; anything else is moved aside. The
    /// staged file is gone afterwards, whatever happens.
    func replace(_ name: String, with file: StagedFile, own: FileIdentity?) throws(SyncError) -> Replacement {
        let target = directory.path(ofAsset: name)
        // The swap must happen in `taken/`: what comes out of the path lands at the new file's name, and the
        // temporary directory is emptied at the next start.
        let staged = nextHeldPath(for: name)
        try file.move(to: staged)
        // The swap moves the old file out of DIR and the new one in: events of the agent's own.
        gate?.expectOwnRemoval(of: name)
        gate?.expectOwnArrival(of: name)
        let (at, entry) = inDirectory(name)
        if emojiart_rename_exchange(AT_FDCWD, staged, at, entry) == 0 {
            let previous: HeldFile
            do {
                previous = HeldFile(path: staged, name: name, status: try heldStatus(staged))
            } catch {
                // Cannot tell whose it is: kept, beside the asset.
                return .installed(movedAside: try moveAside(staged, from: name))
            }
            if Self.isOwn(previous.identity, recorded: own) {
                unlink(staged)
                return .installed(movedAside: nil)
            }
            return .installed(movedAside: try moveAside(staged, from: name))
        }
        let code = errno
        gate?.cancelOwnRemoval(of: name)
        gate?.cancelOwnArrival(of: name)
        if code == ENOENT {
            // The path was emptied since it was looked at: the new file goes in only if it is still empty.
            return try install(staged, as: name) ? .installed(movedAside: nil) : .occupied
        }
        guard code == EINVAL || code == ENOSYS else {
            unlink(staged)
            throw SyncError.system("renameat2", path: target, errno: code, hint: "cannot move the asset into place")
        }
        // No RENAME_EXCHANGE on this file system: take the old file out first, then put the new one in.
        var movedAside: String?
        do {
            if let previous = try take(name) {
                if Self.isOwn(previous.identity, recorded: own) {
                    unlink(previous.path)
                } else {
                    movedAside = try moveAside(previous.path, from: name)
                }
            }
        } catch {
            unlink(staged)
            throw error
        }
        return try install(staged, as: name) ? .installed(movedAside: movedAside) : .occupied
    }

    /// What a removal came to.
    enum Removal: Sendable, Equatable {
        /// The agent's file was unlinked.
        case removed
        /// Nothing was at the path.
        case absent
        /// The file at the path was not the agent's file as the removal found it: it is back, at its name, or
        /// (`movedAside`) beside it when its name was taken meanwhile.
        case kept(movedAside: String?)
    }

    /// Removes the file at asset `name` if it is the agent's file `own`, unchanged since `expected` was taken
    /// (same identity, size and modification time: a rename changes only its change time; nil: the agent's file
    /// whatever its bytes, for a file it put in place itself a moment ago). Anything else is put back. Throws when
    /// the file could not be taken, looked at or unlinked (then nothing was unlinked; a file that could not be put
    /// back either stays in `taken/`, handed back at the next start, and the error says so).
    ///
    /// Once taken, the file is in `taken/`, which is the agent's alone: what was looked at there is what is
    /// unlinked. On a disk mounted with `discard` each unlink waits for the device (about 0.4 ms on the test
    /// machine), which is why removals run on the I/O pool.
    func remove(_ name: String, own: FileIdentity, expected: FileFingerprint?) throws(SyncError) -> Removal {
        hooks?.runBeforeTaking(directory.path(ofAsset: name))
        guard let held = try take(name) else { return .absent }
        let now = held.status.fingerprint
        let unchanged = held.identity == own && now != nil
            && (expected.map { now?.size == $0.size && now?.modifiedNanoseconds == $0.modifiedNanoseconds } ?? true)
        guard unchanged else { return .kept(movedAside: try putBack(held)) }
        if unlink(held.path) == 0 { return .removed }
        let failure = SyncError.system("unlink", path: held.path, errno: errno, hint: "cannot remove the asset")
        do {
            try putBack(held)
        } catch {
            throw SyncError(.system, "\(failure.message); and it could not be put back (it is handed back at the next start): \(error.message)")
        }
        throw failure
    }

    /// Takes the file at asset `name` out of DIR into `taken/` (atomically: whatever is there at that instant),
    /// nil when nothing is there. A taken file whose status cannot be read is put back and the error thrown.
    func take(_ name: String) throws(SyncError) -> HeldFile? {
        let source = directory.path(ofAsset: name)
        let held = nextHeldPath(for: name)
        gate?.expectOwnRemoval(of: name)
        let (at, entry) = inDirectory(name)
        if emojiart_rename_noreplace(at, entry, AT_FDCWD, held) != 0 {
            let code = errno
            gate?.cancelOwnRemoval(of: name)
            if code == ENOENT { return nil }
            throw SyncError.system("renameat2", path: source, errno: code, hint: "cannot take the file to look at it")
        }
        do {
            return HeldFile(path: held, name: name, status: try heldStatus(held))
        } catch {
            _ = try? putBack(HeldFile(path: held, name: name, status: FileStatus(stat())))
            throw error
        }
    }

    /// Removes the file at asset `name` if it is `identity`, a file this agent linked there moments before in the
    /// same I/O job; true when it did. For when `taken/` went with the state directory (`rm -rf DIR` under way, and
    /// the agent stopping), where the file, left, would make `rm` fail. The rule of every removal holds without
    /// `taken/`: the file is taken first, to a hidden name of the agent's in DIR itself (`RENAME_NOREPLACE`), its
    /// identity checked there, and unlinked only if it is the agent's; anything else is put back (or beside its
    /// name), and a look that fails leaves it too.
    func discardJustLinked(_ name: String, identity: FileIdentity) -> Bool {
        let number = taken.wrappingAdd(1, ordering: .relaxed).newValue
        let hidden = ".emojiart-sync-discard-\(getpid())-\(number)"
        let (at, entry) = inDirectory(name)
        let (_, hiddenEntry) = inDirectory(hidden)
        gate?.expectOwnRemoval(of: name)
        gate?.expectOwnArrival(of: hidden)
        guard emojiart_rename_noreplace(at, entry, at, hiddenEntry) == 0 else {
            gate?.cancelOwnRemoval(of: name)
            gate?.cancelOwnArrival(of: hidden)
            return false
        }
        let found: FileStatus?
        do {
            found = try FileStatus.at(hiddenEntry, relativeTo: at)
        } catch {
            found = nil  // not known to be the agent's file: put back, as any file that is not
        }
        if let found, found.identity == identity {
            gate?.expectOwnRemoval(of: hidden)
            if unlinkat(at, hiddenEntry, 0) == 0 { return true }
            gate?.cancelOwnRemoval(of: hidden)
        }
        // Not the agent's: back at its name, or beside it; if even that fails it stays whole under the hidden name.
        _ = try? putBack(HeldFile(path: directory.path(ofAsset: hidden), name: name, status: found ?? FileStatus(stat())))
        return false
    }

    /// Puts a held file back at its name if that is free (nil), else beside it (the name it got).
    @discardableResult
    func putBack(_ held: HeldFile) throws(SyncError) -> String? {
        if try install(held.path, as: held.name, keepingSourceOnFailure: true) { return nil }
        return try moveAside(held.path, from: held.name)
    }

    /// Moves the file at `source` into DIR as a conflict copy of asset `name`; returns the name it got.
    func moveAside(_ source: String, from name: String) throws(SyncError) -> String {
        let stamp = Self.timestamp()
        let stem = name.hasSuffix(AssetFileName.fileExtension) ? String(name.dropLast(AssetFileName.fileExtension.count)) : name
        for attempt in 1...1000 {
            let aside = "\(stem).conflict-\(stamp)\(attempt == 1 ? "" : "-\(attempt)")\(AssetFileName.fileExtension)"
            let target = directory.path(ofAsset: aside)
            let (at, entry) = inDirectory(aside)
            if emojiart_rename_noreplace(AT_FDCWD, source, at, entry) == 0 { return aside }
            if errno != EEXIST {
                throw SyncError.system("renameat2", path: target, errno: errno, hint: "cannot move the file aside (it stays in \(source))")
            }
        }
        throw SyncError(.system, "no free conflict name for \(name) (the file stays in \(source))", path: source)
    }

    /// Renames `source` to DIR's entry `name` unless something is there (false, and `source` is unlinked unless
    /// asked to keep it).
    private func install(_ source: String, as name: String, keepingSourceOnFailure: Bool = false) throws(SyncError) -> Bool {
        let target = directory.path(ofAsset: name)
        let (at, entry) = inDirectory(name)
        gate?.expectOwnArrival(of: name)
        if emojiart_rename_noreplace(AT_FDCWD, source, at, entry) == 0 { return true }
        let code = errno
        gate?.cancelOwnArrival(of: name)
        if !keepingSourceOnFailure { unlink(source) }
        if code == EEXIST { return false }
        throw SyncError.system("renameat2", path: target, errno: code, hint: "cannot move the file into place")
    }

    /// DIR's entry `name` for an `*at` call: relative to DIR's descriptor, or by path when there is none.
    private func inDirectory(_ name: String) -> (Int32, String) {
        directoryDescriptor >= 0 ? (directoryDescriptor, name) : (AT_FDCWD, directory.path(ofAsset: name))
    }

    private func heldStatus(_ path: String) throws(SyncError) -> FileStatus {
        guard let held = try status.status(of: path) else {
            throw SyncError(.system, "\(path) vanished from the agent's state directory", path: path)
        }
        return held
    }

    /// `taken/NAME~PID-N`: unique, and the asset name is what comes before the last `~` (asset names have none).
    private func nextHeldPath(for name: String) -> String {
        let number = taken.wrappingAdd(1, ordering: .relaxed).newValue
        return directory.takenDirectory + "/" + name + "~\(getpid())-\(number)"
    }

    private static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        localtime_r(&now, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y%m%d-%H%M%S", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Hands every file a crash left in `taken/` back to DIR: at its asset name if that is free, else beside it
    /// as a conflict copy. Never unlinks one (it may be a person's file). Run at start, under the directory lock.
    /// Returns the names the files got.
    @discardableResult
    static func returnHeldFiles(in directory: SyncDirectory) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.takenDirectory) else { return [] }
        let keeper = OwnershipGuard(directory: directory, directoryDescriptor: -1, status: PathStatus(hooks: nil), gate: nil, hooks: nil)
        var returned: [String] = []
        for held in names {
            guard let tilde = held.lastIndex(of: "~") else { continue }
            let name = String(held[..<tilde])
            let file = HeldFile(path: directory.takenDirectory + "/" + held, name: name, status: FileStatus(stat()))
            do {
                returned.append(try keeper.putBack(file) ?? name)
            } catch {
                continue  // stays held; tried again at the next start
            }
        }
        return returned
    }
}
