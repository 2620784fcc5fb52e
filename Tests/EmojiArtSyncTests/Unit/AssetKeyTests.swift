@testable import EmojiArtSync
import Testing

@Suite struct AssetKeyTests {
    @Test(arguments: ["/gallery/image?3", "/gallery/image?29", "/a", "/img/x.png?size=2&v=1"])
    func acceptsPathsOnTheServer(_ url: String) throws {
        #expect(try AssetKey(feedURL: url).rawValue == url)
    }

    @Test(arguments: [
        "http://evil.example/gallery/image?1", "https://localhost:8080/gallery/image?1", "//evil.example/x",
        "gallery/image?1", "", "/../etc/passwd", "/gallery/../../etc/passwd", "/gallery/image?1/../../x",
        "/gallery/%2e%2e/x", "/gallery/%2F..%2Fx", "/a\\b", "/a b", "/a\nb", "/a\u{0}b", "/a#frag", "/caf\u{e9}",
        "file:///etc/passwd", "/./x",
    ])
    func refusesAnythingThatCouldLeaveTheServerOrTheDirectory(_ url: String) {
        #expect(throws: AssetKey.Rejection.self) { try AssetKey(feedURL: url) }
    }

    @Test func refusesOverlongKeys() {
        let long = "/" + String(repeating: "a", count: AssetKey.maximumLength)
        #expect(throws: AssetKey.Rejection.self) { try AssetKey(feedURL: long) }
    }

    /// A key keeps its url and file name in one allocation: what it gives back, as strings and as bytes in place,
    /// is what it was made of, for short and long urls alike (a small string and a heap string before).
    @Test(arguments: ["/a", "/gallery/image?3", "/gallery/image/50524.png", "/x?" + String(repeating: "y", count: 900)])
    func givesBackItsURLAndFileNameAsStringsAndInPlace(_ url: String) throws {
        let key = try AssetKey(feedURL: url)
        let name = AssetFileName.derive(from: url)
        #expect(key.rawValue == url)
        #expect(key.fileName == name)
        #expect(key.description == url)
        #expect(key.withURL { Array($0) } == Array(url.utf8))
        #expect(key.withFileName { Array($0) } == Array(name.utf8))
        #expect(key.withFileNameCString { String(cString: $0) } == name, "the name is NUL-terminated in place")
        #expect(key.hasFileName(name))
        #expect(!key.hasFileName(name + "x") && !key.hasFileName(String(name.dropLast())))
        let indexed = try AssetKey(indexedURL: url, fileName: "recorded.png")
        #expect(indexed.fileName == "recorded.png" && indexed.rawValue == url)
    }

    /// A key keeps of its file name only what its url does not give back: nothing for a book-shaped name, the 16
    /// bytes of the digest for a hashed one (its 32 hex digits read back from the name an index row records), the
    /// whole name when no rule gives it back. Before, every key stored its whole name: 63 bytes a key of the hashed
    /// family, 6 MB of an idle agent's heap at 100,000 assets.
    @Test func keepsOnlyWhatTheURLDoesNotGiveBack() throws {
        let book = try AssetKey(feedURL: "/gallery/image?3")
        #expect(book.keptNameBytes == 0 && book.fileName == "gallery_image_3.png")
        let hashed = try AssetKey(feedURL: "/gallery/image/50524.png")
        #expect(hashed.keptNameBytes == AssetFileName.digestCount)
        #expect(hashed.fileName.hasPrefix("asset-gallery_image_50524_png-") && hashed.fileName.count == 30 + 32 + 4)
        for key in [book, hashed] {
            let indexed = try AssetKey(indexedURL: key.rawValue, fileName: key.fileName)
            #expect(indexed.keptNameBytes == key.keptNameBytes, "\(key): read back, not stored")
            #expect(indexed.fileName == key.fileName)
        }
        // Names the rules do not give back for the url are kept as recorded, byte for byte.
        let hex = String(hashed.fileName.dropFirst(hashed.fileName.count - 36).dropLast(4))
        for recorded in ["asset-other-\(hex).png", "asset-gallery_image_50524_png-\(hex.uppercased()).png", "gallery_image_3.PNG", "x.png"] {
            let indexed = try AssetKey(indexedURL: "/gallery/image/50524.png", fileName: recorded)
            #expect(indexed.fileName == recorded && indexed.keptNameBytes == recorded.utf8.count)
            #expect(indexed.withFileNameCString { String(cString: $0) } == recorded)
        }
        #expect(throws: AssetKey.Rejection.self) {
            try AssetKey(indexedURL: "/a", fileName: String(repeating: "n", count: AssetKey.maximumLength + 1))
        }
    }

    /// Keys made apart from the same url are one key (equal, same hash, one dictionary entry), whichever way they
    /// were made; different urls are different keys, ordered as their urls are.
    @Test func keysMadeApartFromOneURLAreOneKey() throws {
        let fromFeed = try AssetKey(feedURL: "/gallery/image/7.png")
        let fromIndex = try AssetKey(indexedURL: "/gallery/image/7.png", fileName: fromFeed.fileName)
        var probed = "/gallery/image/7.png"
        let probe = probed.withUTF8 { AssetKey(probing: $0) }
        #expect(fromFeed == fromIndex && fromFeed == probe)
        #expect(fromFeed.hashValue == fromIndex.hashValue && fromFeed.hashValue == probe.hashValue)
        #expect(Set([fromFeed, fromIndex, probe]).count == 1)
        #expect([fromFeed: 1][probe] == 1)
        let urls = ["/gallery/image?10", "/gallery/image?9", "/a", "/gallery/image?1", "/gallery/image/7.png"]
        let keys = try urls.map { try AssetKey(feedURL: $0) }
        #expect(Set(keys).count == urls.count)
        #expect(keys.sorted().map(\.rawValue) == urls.sorted())
        #expect(try AssetKey(feedURL: "/ab") != AssetKey(feedURL: "/a"), "a prefix is another key")
    }
}

@Suite struct AssetFileNameTests {
    /// Names of the hashed family must never change: a mirror's files are found by them. These were made by
    /// the first implementation (and by an independent one: Python's hashlib, the same rule).
    @Test(arguments: [
        ("/gallery/image/50524.png", "asset-gallery_image_50524_png-48e01a73ec60349b43c8760361670157.png"),
        ("/photos/2026/november/a-very-long-album-name-with-many-words/IMG_0001.png?size=large",
         "asset-photos_2026_november_a_very_long_album_name_with-86163e94c39d39ebe81208e37cbf1e47.png"),
        ("/" + String(repeating: "a", count: 47) + "/b.png",
         "asset-" + String(repeating: "a", count: 47) + "_-0d56e23b7b51c58991b5b431613253f1.png"),
        ("/%41?", "asset-41-71bfff0acd25cc3dfd8288961b9d5f3c.png"),
    ])
    func hashedNamesStayAsTheyWere(key: String, name: String) throws {
        #expect(AssetFileName.name(for: try AssetKey(feedURL: key)) == name)
    }

    @Test func usesTheBookMappingForGalleryImages() throws {
        #expect(AssetFileName.name(for: try AssetKey(feedURL: "/gallery/image?3")) == "gallery_image_3.png")
        #expect(AssetFileName.name(for: try AssetKey(feedURL: "/gallery/image?1000")) == "gallery_image_1000.png")
    }

    @Test func keysTheBookMappingWouldCollapseGetDistinctNames() throws {
        let keys = ["/gallery/image?3", "/gallery/image/3", "/gallery_image?3", "/gallery?image/3", "/gallery/image?3?", "/Gallery/image?3"]
        let names = try keys.map { AssetFileName.name(for: try AssetKey(feedURL: $0)) }
        #expect(Set(names).count == keys.count, "\(names)")
    }

    @Test func everyNameIsSafe() throws {
        let keys = [
            "/gallery/image?3", "/x?" + String(repeating: "y", count: 900), "/a/b/c/d?e=f&g=h", "/%41", "/-", "/.a",
            "/.emojiart-sync", "/a?b", "/" + String(repeating: "z", count: 30) + "/b?c",
        ]
        var seen = Set<String>()
        for raw in keys {
            let name = AssetFileName.name(for: try AssetKey(feedURL: raw))
            #expect(name.utf8.count <= 100)
            #expect(!name.hasPrefix("."))
            #expect(!name.contains("/") && !name.contains("..") && !name.contains("\u{0}"))
            #expect(name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == ".") })
            #expect(seen.insert(name).inserted, "collision on \(name)")
        }
    }
}

@Suite struct ServerAddressTests {
    @Test func acceptsOrigins() throws {
        #expect(try ServerAddress("http://localhost:8080").origin == "http://localhost:8080")
        #expect(try ServerAddress("https://gallery.example/").origin == "https://gallery.example")
        #expect(try ServerAddress("http://127.0.0.1:9").feedURL == "http://127.0.0.1:9/gallery/images")
    }

    @Test(arguments: ["ftp://x", "localhost:8080", "http://", "http://u:p@h", "http://h/path", "http://h/?q", "file:///tmp"])
    func refusesEverythingElse(_ text: String) {
        #expect(throws: SyncError.self) { try ServerAddress(text) }
    }
}

@Suite struct ByteCountTests {
    @Test func parsesHumanSizes() {
        #expect(ByteCount.parse("64M") == 64 << 20)
        #expect(ByteCount.parse("64MiB") == 64 << 20)
        #expect(ByteCount.parse("512k") == 512 << 10)
        #expect(ByteCount.parse("1G") == 1 << 30)
        #expect(ByteCount.parse("123") == 123)
        #expect(ByteCount.parse("12B") == 12)
        #expect(ByteCount.parse("x") == nil)
        #expect(ByteCount.parse("-1") == nil)
        #expect(ByteCount.parse("99999999999999999G") == nil)
    }
}
