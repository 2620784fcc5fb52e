// libFuzzer entry point for the feed decoder: GalleryFeed.decode, AssetKey(feedURL:) and AssetFileName.
// Built by contrib/fuzz.sh together with the Feed, SyncError, AssetFileName and SHA256Digest sources (not by
// SwiftPM). Every input is tried twice: as a whole feed body and as one feed URL. Besides crashes, the
// harness traps when an accepted key breaks a promise AssetKey documents, or a file name breaks one
// AssetFileName documents, or when the streaming reader and JSONDecoder (`decodeWithJSONDecoder`) disagree
// other than where the reader is documented to be stricter; see docs/RELIABILITY.md.

/// Traps with `message` unless `condition` holds: a broken invariant is a finding, like a crash.
private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("invariant broken: \(message())") }
}

/// What AssetKey promises about every key it accepts.
private func checkAccepted(_ key: AssetKey) {
    let raw = key.rawValue
    let bytes = Array(raw.utf8)
    require(!bytes.isEmpty && bytes.count <= AssetKey.maximumLength, "length \(bytes.count): \(raw)")
    require(bytes[0] == UInt8(ascii: "/") && (bytes.count == 1 || bytes[1] != UInt8(ascii: "/")), "leading /: \(raw)")
    require(bytes.allSatisfy { (0x21...0x7E).contains($0) }, "non-printable byte: \(raw)")
    require(!bytes.contains(UInt8(ascii: "\\")) && !bytes.contains(UInt8(ascii: "#")), "backslash or #: \(raw)")
    require(!raw.contains(".."), "contains ..: \(raw)")
    let lowered = raw.lowercased()
    for encoded in ["%2e", "%2f", "%5c", "%00"] {
        require(!lowered.contains(encoded), "percent-encoded \(encoded): \(raw)")
    }
    let path = raw.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
    require(!path.split(separator: "/", omittingEmptySubsequences: false).contains("."), "dot segment: \(raw)")

    let name = AssetFileName.name(for: key)
    let nameBytes = Array(name.utf8)
    require(name.hasSuffix(AssetFileName.fileExtension) && nameBytes.count <= 100, "file name \(name) for \(raw)")
    require(nameBytes.first != UInt8(ascii: "."), "hidden file name \(name) for \(raw)")
    let stem = nameBytes.dropLast(AssetFileName.fileExtension.utf8.count)
    require(
        !stem.isEmpty
            && stem.allSatisfy { byte in
                switch byte {
                case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "_"), UInt8(ascii: "-"): true
                default: false
                }
            },
        "file name \(name) for \(raw) has characters outside [A-Za-z0-9_-]")
}

/// Phrases of the reader's refusals where JSONDecoder is lax on values it does not decode (FeedScanner):
/// the only reasons the reader may refuse a body JSONDecoder accepts.
private let stricterThanJSONDecoder = [
    "trailing comma", "invalid UTF-8", "invalid escape", "control character", "invalid number", "not UTF-8",
]

/// `body` (valid JSON) with every number whose value is zero and that has an exponent (`0e3`, `-0.0E+5`)
/// written `0`. JSONDecoder refuses some of those (swift-foundation's `isTrueZero` reads the last bytes of a
/// number in reverse, so `0e3` "underflows"); RFC 8259 allows them, and the reader accepts them.
private func zerosWithExponentsWrittenPlainly(_ body: [UInt8]) -> [UInt8] {
    body.withUnsafeBufferPointer { buffer in
        var scanner = FeedScanner(buffer)
        var output: [UInt8] = []
        while let byte = scanner.peek {
            let start = scanner.index
            if byte == UInt8(ascii: "\"") {
                _ = try? scanner.scanString()
            } else if byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte),
                let (range, hasExponent) = try? scanner.scanNumber()
            {
                let mantissa = buffer[range].prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }
                if hasExponent && !mantissa.contains(where: { (UInt8(ascii: "1")...UInt8(ascii: "9")).contains($0) }) {
                    output.append(UInt8(ascii: "0"))
                    continue
                }
            } else {
                scanner.index += 1
            }
            output += buffer[start..<max(scanner.index, start + 1)]
            scanner.index = max(scanner.index, start + 1)
        }
        return output
    }
}

private func same(_ feed: GalleryFeed, _ expected: GalleryFeed) -> Bool {
    feed.entries == expected.entries && feed.uniqueKeys == expected.uniqueKeys && feed.rejections == expected.rejections
        && feed.tags == expected.tags
}

/// The streaming reader against JSONDecoder: the same feed when both accept; never accepting what
/// JSONDecoder refuses (but for its zeros with exponents); refusing what it accepts only for a reason in
/// `stricterThanJSONDecoder`.
private func compareWithJSONDecoder(_ bytes: [UInt8], _ streamed: Result<GalleryFeed, SyncError>) {
    let reference = Result { () throws(SyncError) -> GalleryFeed in try GalleryFeed.decodeWithJSONDecoder(bytes) }
    switch (streamed, reference) {
    case (.success(let feed), .success(let expected)):
        require(same(feed, expected), "the feed differs from JSONDecoder's")
    case (.success(let feed), .failure(let error)):
        let plain = zerosWithExponentsWrittenPlainly(bytes)
        let retried = Result { () throws(SyncError) -> GalleryFeed in try GalleryFeed.decodeWithJSONDecoder(plain) }
        guard case .success(let expected) = retried, plain != bytes else {
            return require(false, "the reader accepts a body JSONDecoder refuses (\(error))")
        }
        require(same(feed, expected), "the feed differs from JSONDecoder's (zeros written plainly)")
    case (.failure(let error), .success):
        require(stricterThanJSONDecoder.contains { error.message.contains($0) }, "the reader refuses a body JSONDecoder accepts: \(error)")
    case (.failure, .failure):
        break
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFeed(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))

    // The whole input as a feed body.
    let streamed = Result { () throws(SyncError) -> GalleryFeed in try GalleryFeed.decode(bytes) }
    compareWithJSONDecoder(bytes, streamed)
    do {
        let feed = try streamed.get()
        feed.entries.forEach(checkAccepted)
        require(Set(feed.uniqueKeys).count == feed.uniqueKeys.count, "uniqueKeys has duplicates")
        require(Set(feed.uniqueKeys) == Set(feed.entries), "uniqueKeys and entries differ")
        require(feed.uniqueKeys.count <= GalleryFeed.maximumUniqueAssets, "too many unique keys")
        // Distinct keys of one feed must get distinct files.
        let names = Set(feed.uniqueKeys.map(AssetFileName.name(for:)))
        require(names.count == feed.uniqueKeys.count, "two keys of one feed share a file name")
    } catch {
        require(error.code == .feed && !error.message.isEmpty, "decode threw \(error.code): \(error)")
    }

    // The whole input as one feed URL.
    let url = String(decoding: bytes, as: UTF8.self)
    do {
        checkAccepted(try AssetKey(feedURL: url))
    } catch {
        require(error.url == url && !error.reason.isEmpty, "rejection without a reason")
    }
    return 0
}
