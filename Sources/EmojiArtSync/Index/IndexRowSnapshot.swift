/// One row of the index as a feed's sweep reads it (`FeedSweepMatch`): the key's url, the file name and the feed
/// tag as the row spells them, and the digest of the fingerprint it records. The bytes are valid only during the
/// call that hands the row over.
struct IndexSweepRow {
    let url: UnsafeBufferPointer<UInt8>
    let name: UnsafeBufferPointer<UInt8>
    /// nil: the row records no tag.
    let tag: UnsafeBufferPointer<UInt8>?
    /// `FingerprintDigest.value`, or `FingerprintDigest.none` where the row records no fingerprint.
    let digest: UInt64
}

/// The rows a feed's sweep reads, read in one walk through a read-only connection of their own, off the silo:
/// `--once` reads them while the feed downloads and decodes, and the catalogue matches them with the feed on the
/// blocking-I/O pool (`FeedCatalogue.replace(_:matching:)`), so that a new feed costs the silo no walk at all.
///
/// The rows' bytes sit in chunks of 1 MiB (filled in turn, never copied to grow) and each row is a chunk, an
/// offset, three lengths and a digest: about 150 bytes a row, 15 MB at 100,000, freed once they are matched.
/// They describe the index only while it is unchanged since `changesBefore` (`AssetIndex.changesMade`): the
/// catalogue checks that before it takes what they say.
struct IndexRowSnapshot: Sendable {
    /// `AssetIndex.changesMade` when the walk began.
    let changesBefore: Int64
    private var chunks: [[UInt8]] = []
    private var rows: [Row] = []

    private static let chunkSize = 1 << 20

    private struct Row {
        let chunk: Int32
        let start: Int32
        let urlCount: Int32
        let nameCount: Int32
        /// -1: no tag.
        let tagCount: Int32
        let digest: UInt64
    }

    var count: Int { rows.count }

    /// Reads every row of the index at `path` (`AssetIndex.snapshotSource()`), blocking: call it off the silo.
    static func read(path: String, changesBefore: Int64) throws(SyncError) -> IndexRowSnapshot {
        let connection = try SQLiteConnection(readingOnly: path)
        let statement = try connection.prepare(AssetIndex.sweepQuery)
        defer { statement.reset() }
        var snapshot = IndexRowSnapshot(changesBefore: changesBefore)
        snapshot.rows.reserveCapacity(Int(try connection.integer("SELECT count(*) FROM files")))
        while try statement.step() {
            AssetIndex.sweepRow(of: statement) { snapshot.append($0) }
        }
        return snapshot
    }

    private init(changesBefore: Int64) {
        self.changesBefore = changesBefore
    }

    private mutating func append(_ row: IndexSweepRow) {
        let length = row.url.count + row.name.count + (row.tag?.count ?? 0)
        if chunks.isEmpty || chunks[chunks.count - 1].count + length > Self.chunkSize {
            chunks.append([])
            chunks[chunks.count - 1].reserveCapacity(max(Self.chunkSize, length))
        }
        let chunk = chunks.count - 1
        let start = chunks[chunk].count
        chunks[chunk].append(contentsOf: row.url)
        chunks[chunk].append(contentsOf: row.name)
        if let tag = row.tag { chunks[chunk].append(contentsOf: tag) }
        rows.append(Row(
            chunk: Int32(chunk), start: Int32(start), urlCount: Int32(row.url.count), nameCount: Int32(row.name.count),
            tagCount: row.tag.map { Int32($0.count) } ?? -1, digest: row.digest))
    }

    /// Calls `body` with each row (of those at `range`, by the order the walk read them), in that order.
    func forEach(in range: Range<Int>? = nil, _ body: (IndexSweepRow) -> Void) {
        for row in rows[range ?? rows.indices] {
            chunks[Int(row.chunk)].withUnsafeBufferPointer { text in
                let urlStart = Int(row.start), nameStart = urlStart + Int(row.urlCount)
                let tagStart = nameStart + Int(row.nameCount)
                body(IndexSweepRow(
                    url: UnsafeBufferPointer(rebasing: text[urlStart..<nameStart]),
                    name: UnsafeBufferPointer(rebasing: text[nameStart..<tagStart]),
                    tag: row.tagCount < 0 ? nil : UnsafeBufferPointer(rebasing: text[tagStart..<tagStart + Int(row.tagCount)]),
                    digest: row.digest))
            }
        }
    }
}
