@testable import EmojiArtSync
import Testing

/// A feed's `checksum` is kept as 16 bytes when it is a UUID, and given back exactly as the feed spelt it: the
/// index records the text, and a tag read back from it must equal the feed's, or every stored file looks stale.
@Suite struct FeedTagTests {
    @Test(arguments: [
        "6E50505F-45E4-47AE-B693-CF89C1E1D748",  // the book's server: UUID().uuidString
        "6e50505f-45e4-47ae-b693-cf89c1e1d748",  // small letters
        "6E50505f-45E4-47AE-B693-CF89C1E1D748",  // mixed: kept as text
        "12345678-1234-1234-1234-123456789012",  // digits only
        "6E50505F45E447AEB693CF89C1E1D748",  // no dashes: text
        "6E50505F-45E4-47AE-B693-CF89C1E1D74G",  // not hex: text
        "", "A", "\u{1F680}\n",
    ])
    func aTagIsGivenBackAsTheFeedSpeltIt(text: String) {
        let tag = FeedTag(text)
        #expect(tag.description == text)
        var bytes = text
        let fromBytes = bytes.withUTF8 { FeedTag($0) }
        #expect(fromBytes == tag)
    }

    @Test(arguments: [
        ("6E50505F-45E4-47AE-B693-CF89C1E1D748", true), ("6e50505f-45e4-47ae-b693-cf89c1e1d748", true),
        ("12345678-1234-1234-1234-123456789012", true), ("00000000-0000-0000-0000-000000000000", true),
        ("6E50505f-45E4-47AE-B693-CF89C1E1D748", false),  // mixed case
        ("6E50505F-45E4-47AE-B693-CF89C1E1D74G", false), ("6E50505F-45E4-47AE-B693-CF89C1E1D74:", false),
        ("6E50505F4-5E4-47AE-B693-CF89C1E1D748", false),  // a dash moved
        ("6E50505F-45E4-47AE-B693+CF89C1E1D748", false), ("6E50505F-45E4-47AE-B693-CF89C1E1D7480", false),
    ])
    func aUUIDIsKeptAsSixteenBytesAndAnythingElseAsText(text: String, isUUID: Bool) {
        var bytes = text
        let tag = bytes.withUTF8 { FeedTag($0) }
        if case .uuid = tag.storage { #expect(isUUID, "\(text)") } else { #expect(!isUUID, "\(text)") }
        #expect(tag.description == text)
    }

    @Test func tagsSpeltDifferentlyDiffer() {
        #expect(FeedTag("6E50505F-45E4-47AE-B693-CF89C1E1D748") != FeedTag("6e50505f-45e4-47ae-b693-cf89c1e1d748"))
        #expect(FeedTag("6E50505F-45E4-47AE-B693-CF89C1E1D748") != FeedTag("6E50505F-45E4-47AE-B693-CF89C1E1D749"))
        #expect(FeedTag("6E50505F-45E4-47AE-B693-CF89C1E1D748") == FeedTag("6E50505F-45E4-47AE-B693-CF89C1E1D748"))
    }
}
