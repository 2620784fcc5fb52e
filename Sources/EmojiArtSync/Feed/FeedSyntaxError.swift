/// Why a feed body is not a JSON array of items: what was expected or found, and at which byte.
///
/// The scanner throws it with an offset; `FeedReader` adds the item path (`[3].url`) and turns the offset into
/// a line and column only when it builds the message, so a feed that parses pays for neither.
struct FeedSyntaxError: Error, Sendable {
    /// What went wrong, in words: `expected a string, found a number`.
    var reason: String
    /// The byte offset in the body where it went wrong; nil for a refusal of the feed as a whole (too many
    /// assets), whose reason is then the whole message.
    var offset: Int?
    /// The item path (`[3].url`), once the reader knows it.
    var path: String?

    init(_ reason: String, at offset: Int?) {
        self.reason = reason
        self.offset = offset
    }

    /// `feed is not a JSON array of {name, url, price, checksum}: at [3].url (line 1, column 57): expected a
    /// string, found a number`.
    func message(in body: UnsafeBufferPointer<UInt8>) -> String {
        guard let offset else { return reason }
        var line = 1, column = 1
        for byte in body[..<min(offset, body.count)] {
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {  // one column per character, not per byte
                column += 1
            }
        }
        let place = "line \(line), column \(column)"
        let location = path.map { "\($0) (\(place))" } ?? place
        return "feed is not a JSON array of {name, url, price, checksum}: at \(location): \(reason)"
    }
}
