import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The last feed a run accepted, kept in the state folder (`DIR/.emojiart-sync/feed.snapshot`) with the
/// validators (`ETag`, `Last-Modified`) and the body digest the server gave for it: HTTP's cache of a
/// representation, for the next process. A `--once` run or a restarted agent asks for the feed conditionally with
/// these; when the gallery answers `304 Not Modified`, or the same bytes again, the feed is read from here (the
/// keys, their tags, every listing's position and the refused urls, about 6 MB at 100,000 items) instead of
/// being downloaded and decoded again (36 MB of JSON, most of a warm run's start).
///
/// A cache, never the truth: a snapshot of another gallery's feed, of another format version, cut short, or whose
/// checksum does not match is not used (the run asks unconditionally, as without one), and it is written again
/// from each feed that changed. Its urls are checked again as the feed's are (`AssetKey(feedURLBytes:)`): the
/// file is the agent's, but what reads it trusts nothing it did not check.
///
/// Layout (little-endian): the magic line, a format version (`UInt32`), the SHA-256 of the rest, then the feed's
/// url, its validators and body digest, the keys (url and tag), the listings' positions, the refused urls.
struct FeedSnapshot: Sendable {
    /// The feed url the snapshot is of: another `--server` does not use it.
    let feedURL: String
    /// What the server sent with the body; empty when it sent neither.
    let validators: HTTPValidators
    /// The body's SHA-256 (hex): a `200` with the same bytes is the same feed.
    let bodyDigest: String
    /// Holds the encoded keys, positions and refusals from `itemsStart` to its end (`feed()` reads them): the file
    /// read whole, or what `init(feed:...)` encoded.
    private let bytes: [UInt8]
    private let itemsStart: Int

    static let fileName = "feed.snapshot"
    private static let magic = Array("emojiart-sync feed snapshot\n".utf8)
    private static let version: UInt32 = 1
    /// A larger file is not read: 100,000 keys with the longest urls a feed may carry are well below it.
    static let maximumSize = 256 * 1024 * 1024

    /// The snapshot of `feed`, received with `validators` and a body whose SHA-256 is `bodyDigest`.
    init(feed: GalleryFeed, feedURL: String, validators: HTTPValidators, bodyDigest: String) {
        self.feedURL = feedURL
        self.validators = validators
        self.bodyDigest = bodyDigest
        var writer = Writer()
        // About 50 bytes a key (a url of the book's shape, a UUID tag) and 4 a listing: grown at most once.
        writer.output.reserveCapacity(64 * feed.uniqueKeys.count + 4 * feed.entryPositions.count + 1024)
        writer.count(feed.uniqueKeys.count)
        for (key, tag) in zip(feed.items.keys, feed.items.tags) {
            key.withURL { writer.bytes($0) }
            writer.tag(tag)
        }
        writer.count(feed.entryPositions.count)
        for position in feed.entryPositions { writer.uint32(UInt32(bitPattern: position)) }
        writer.count(feed.rejections.count)
        for rejection in feed.rejections {
            writer.string(rejection.url)
            writer.string(rejection.reason)
        }
        bytes = writer.output
        itemsStart = 0
    }

    private init(feedURL: String, validators: HTTPValidators, bodyDigest: String, bytes: [UInt8], itemsStart: Int) {
        self.feedURL = feedURL
        self.validators = validators
        self.bodyDigest = bodyDigest
        self.bytes = bytes
        self.itemsStart = itemsStart
    }

    /// A snapshot to write: of a feed just decoded, or of the same bytes under the validators the gallery gave them
    /// this time. Made into a snapshot (encoded) where it is written, off the silo.
    enum Update: Sendable {
        case of(GalleryFeed, validators: HTTPValidators, bodyDigest: String)
        case revalidated(FeedSnapshot, validators: HTTPValidators)

        func snapshot(feedURL: String) -> FeedSnapshot {
            switch self {
            case .of(let feed, let validators, let bodyDigest):
                FeedSnapshot(feed: feed, feedURL: feedURL, validators: validators, bodyDigest: bodyDigest)
            case .revalidated(let kept, let validators):
                FeedSnapshot(
                    feedURL: kept.feedURL, validators: validators, bodyDigest: kept.bodyDigest, bytes: kept.bytes,
                    itemsStart: kept.itemsStart)
            }
        }
    }

    /// The file's bytes: magic, version, checksum, then the checksummed rest.
    func encoded() -> [UInt8] {
        let (head, items) = fileParts()
        return head + items
    }

    /// The file as two parts, the second the items in place (this snapshot's own buffer: written, not copied): the
    /// magic, version, checksum and the gallery's url, validators and body digest; then the items.
    private func fileParts() -> (head: [UInt8], items: ArraySlice<UInt8>) {
        var fields = Writer()
        fields.string(feedURL)
        fields.optionalString(validators.etag)
        fields.optionalString(validators.lastModified)
        fields.string(bodyDigest)
        let items = bytes[itemsStart...]
        var digest = SHA256Digest()
        fields.output.withUnsafeBytes { digest.update($0) }
        items.withUnsafeBytes { digest.update($0) }
        var head = Self.magic
        withUnsafeBytes(of: Self.version.littleEndian) { head += $0 }
        head += digest.finalize()
        head += fields.output
        return (head, items)
    }

    /// The snapshot `bytes` hold, or why they are not one to use.
    static func decode(_ bytes: [UInt8]) throws(SnapshotUnusable) -> FeedSnapshot {
        let header = magic.count + 4 + 32
        guard bytes.count >= header, bytes.starts(with: magic) else { throw SnapshotUnusable("not a feed snapshot") }
        var reader = Reader(bytes, at: magic.count)
        let version = try reader.uint32()
        guard version == Self.version else { throw SnapshotUnusable("format version \(version), not \(Self.version)") }
        let matches = bytes.withUnsafeBytes { file in
            SHA256Digest.withDigest(of: UnsafeRawBufferPointer(rebasing: file[header...])) { digest in
                digest.elementsEqual(file[(magic.count + 4)..<header])
            }
        }
        guard matches else { throw SnapshotUnusable("its checksum does not match") }
        reader = Reader(bytes, at: header)
        let feedURL = try reader.string()
        let validators = HTTPValidators(etag: try reader.optionalString(), lastModified: try reader.optionalString())
        let bodyDigest = try reader.string()
        return FeedSnapshot(
            feedURL: feedURL, validators: validators, bodyDigest: bodyDigest, bytes: bytes, itemsStart: reader.offset)
    }

    /// The feed the snapshot keeps, its urls checked as a feed's are. Throws when the keys, positions and refusals
    /// do not make a feed (a file that passed its checksum but was not written by this format).
    func feed() throws(SnapshotUnusable) -> GalleryFeed {
        var reader = Reader(bytes, at: itemsStart)
        let keyCount = try reader.count(atMost: GalleryFeed.maximumUniqueAssets)
        var keys: [AssetKey] = []
        var tags: [FeedTag?] = []
        keys.reserveCapacity(keyCount)
        tags.reserveCapacity(keyCount)
        for _ in 0..<keyCount {
            let key = try reader.withBytes { url throws(SnapshotUnusable) in
                do throws(AssetKey.Rejection) {
                    return try AssetKey(feedURLBytes: url)
                } catch {
                    throw SnapshotUnusable("it holds a url a feed may not give (\(error.reason))")
                }
            }
            keys.append(key)
            tags.append(try reader.tag())
        }
        let entryCount = try reader.count(atMost: (bytes.count - reader.offset) / 4)
        var entries: [Int32] = []
        entries.reserveCapacity(entryCount)
        for _ in 0..<entryCount {
            let position = try reader.uint32()
            guard position < keyCount else { throw SnapshotUnusable("a listing's position is past its keys") }
            entries.append(Int32(position))
        }
        let rejectionCount = try reader.count(atMost: bytes.count - reader.offset)
        var rejections: [AssetKey.Rejection] = []
        for _ in 0..<rejectionCount {
            rejections.append(AssetKey.Rejection(url: try reader.string(), reason: try reader.string()))
        }
        guard reader.offset == bytes.count else { throw SnapshotUnusable("bytes follow its last refusal") }
        let items: FeedState
        do {
            items = try FeedState(distinctKeys: keys, tags: tags)
        } catch {
            throw SnapshotUnusable("it lists \(error.key) twice")
        }
        return GalleryFeed(entryPositions: entries, items: items, rejections: rejections)
    }

    /// Why a snapshot is not used.
    struct SnapshotUnusable: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Appends the snapshot's values.
    private struct Writer {
        var output: [UInt8] = []

        mutating func uint32(_ value: UInt32) {
            withUnsafeBytes(of: value.littleEndian) { output += $0 }
        }

        mutating func count(_ value: Int) { uint32(UInt32(value)) }

        mutating func bytes(_ bytes: UnsafeBufferPointer<UInt8>) {
            count(bytes.count)
            output += bytes
        }

        mutating func string(_ text: String) {
            var text = text
            text.withUTF8 { bytes($0) }
        }

        /// A kind byte (0: none, 1: a UUID's 16 bytes and its case, 2: text), then the tag.
        mutating func tag(_ tag: FeedTag?) {
            switch tag?.storage {
            case nil:
                output.append(0)
            case .uuid(let high, let low, let lowercase):
                output.append(1)
                withUnsafeBytes(of: high.littleEndian) { output += $0 }
                withUnsafeBytes(of: low.littleEndian) { output += $0 }
                output.append(lowercase ? 1 : 0)
            case .text(let text):
                output.append(2)
                string(text)
            }
        }

        /// A presence byte, then the string.
        mutating func optionalString(_ text: String?) {
            output.append(text == nil ? 0 : 1)
            if let text { string(text) }
        }
    }

    /// Reads the values `Writer` appended; any read past the end, or a count too large, throws.
    private struct Reader {
        let bytes: [UInt8]
        var offset: Int

        init(_ bytes: [UInt8], at offset: Int) {
            self.bytes = bytes
            self.offset = offset
        }

        mutating func uint32() throws(SnapshotUnusable) -> UInt32 {
            guard bytes.count - offset >= 4 else { throw SnapshotUnusable("it is cut short") }
            var value: UInt32 = 0
            for at in 0..<4 { value |= UInt32(bytes[offset + at]) << (8 * at) }
            offset += 4
            return value
        }

        mutating func count(atMost limit: Int) throws(SnapshotUnusable) -> Int {
            let value = Int(try uint32())
            guard value <= limit else { throw SnapshotUnusable("it claims \(value) items where at most \(limit) fit") }
            return value
        }

        /// Calls `body` with the next length-prefixed bytes, in place.
        mutating func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws(SnapshotUnusable) -> R) throws(SnapshotUnusable) -> R {
            let length = try count(atMost: bytes.count - offset - 4)
            let start = offset
            offset += length
            return try bytes.withUnsafeBufferPointer { all throws(SnapshotUnusable) in
                try body(UnsafeBufferPointer(rebasing: all[start..<start + length]))
            }
        }

        mutating func string() throws(SnapshotUnusable) -> String {
            try withBytes { bytes throws(SnapshotUnusable) in
                guard let text = String(validating: bytes, as: UTF8.self) else { throw SnapshotUnusable("a string is not UTF-8") }
                return text
            }
        }

        mutating func tag() throws(SnapshotUnusable) -> FeedTag? {
            switch try byte() {
            case 0:
                return nil
            case 1:
                let high = UInt64(try uint32()) | UInt64(try uint32()) << 32
                let low = UInt64(try uint32()) | UInt64(try uint32()) << 32
                let lowercase = try byte()
                guard lowercase <= 1 else { throw SnapshotUnusable("a tag's case byte is \(lowercase)") }
                return FeedTag(storage: .uuid(high: high, low: low, lowercase: lowercase == 1))
            case 2:
                return FeedTag(storage: .text(try string()))
            case let kind:
                throw SnapshotUnusable("a tag's kind byte is \(kind)")
            }
        }

        mutating func byte() throws(SnapshotUnusable) -> UInt8 {
            guard offset < bytes.count else { throw SnapshotUnusable("it is cut short") }
            offset += 1
            return bytes[offset - 1]
        }

        mutating func optionalString() throws(SnapshotUnusable) -> String? {
            let present = try byte()
            switch present {
            case 0: return nil
            case 1: return try string()
            default: throw SnapshotUnusable("a presence byte is \(present)")
            }
        }
    }
}

extension FeedSnapshot {
    /// The path of the snapshot in `directory`'s state folder.
    static func path(in directory: SyncDirectory) -> String { directory.stateDirectory + "/" + fileName }

    /// The snapshot in `directory`'s state folder when it is one of `feedURL`'s to use; nil when there is none.
    /// Throws why the file there cannot be used (unreadable, not a snapshot, damaged): the caller says so and
    /// goes on without it.
    static func read(in directory: SyncDirectory, feedURL: String) throws -> FeedSnapshot? {
        let path = path(in: directory)
        let opened: (fd: Int32, size: Int)
        do throws(SyncError) {
            opened = try DiskStorage.openRegularFile(at: path)
        } catch {
            if error.errnoValue == ENOENT { return nil }
            throw error
        }
        defer { close(opened.fd) }
        guard opened.size <= maximumSize else { throw SnapshotUnusable("it is larger than \(maximumSize) bytes") }
        // Read into a buffer of the file's size: a snapshot is rewritten whole (a rename), never appended to.
        var bytes = [UInt8](repeating: 0, count: opened.size)
        let read = bytes.withUnsafeMutableBytes { readFully(opened.fd, into: $0) }
        switch read {
        case .failure(let error):
            throw SyncError.system("read", path: path, errno: error.errno, hint: "cannot read the feed snapshot")
        case .success(let count) where count < opened.size:
            throw SnapshotUnusable("it is shorter than its size said")
        case .success:
            break
        }
        let snapshot = try decode(bytes)
        return snapshot.feedURL == feedURL ? snapshot : nil
    }

    /// Reads `fd` into `buffer` until it is full or the file ends: how much was read.
    private static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, SystemCallFailure> {
        var offset = 0
        while offset < buffer.count {
            let start = buffer.baseAddress! + offset
            let wanted = buffer.count - offset
            let count: Int
            do throws(SystemCallFailure) {
                count = try retryingInterrupts { Glibc.read(fd, start, wanted) }
            } catch {
                return .failure(error)
            }
            if count == 0 { return .success(offset) }
            offset += count
        }
        return .success(offset)
    }

    /// Writes all of `part` to `fd`; the failure, if any.
    private static func write(_ part: ArraySlice<UInt8>, to fd: Int32) -> SystemCallFailure? {
        part.withUnsafeBytes { buffer -> SystemCallFailure? in
            do throws(SystemCallFailure) {
                try writeFully(fd, buffer)
                return nil
            } catch {
                return error
            }
        }
    }

    /// Replaces the snapshot in `directory`'s state folder with this one (a temporary file, then a rename: a reader
    /// sees the old one or the new one whole), unless DIR is being emptied (`gate` shut: nothing new is put there).
    /// Not flushed: a snapshot a crash cuts short fails its checksum and is not used.
    func write(in directory: SyncDirectory, gate: RenameGate) throws(SyncError) {
        let path = Self.path(in: directory)
        let temporary = path + ".tmp-\(getpid())"
        let (head, items) = fileParts()
        guard gate.isOpen else { return }
        let fd = try systemCall("open", path: temporary, hint: "cannot write the feed snapshot") {
            open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
        }
        var failure: (call: String, error: SystemCallFailure)?
        if let error = Self.write(head[...], to: fd) ?? Self.write(items, to: fd) { failure = ("write", error) }
        close(fd)
        if failure == nil {
            do throws(SystemCallFailure) {
                _ = try retryingInterrupts { rename(temporary, path) }
            } catch {
                failure = ("rename", error)
            }
        }
        if let failure {
            unlink(temporary)
            throw SyncError.system(failure.call, path: path, errno: failure.error.errno, hint: "cannot write the feed snapshot")
        }
    }
}
