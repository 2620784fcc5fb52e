import FoundationEssentials

/// Thrown instead of asking the server again for an item whose URL recently answered with something that is
/// not an image (the book's `200` with a JSON error), as recorded in the index by this run or an earlier one.
///
/// The record holds until `retryAt`, or until the feed gives the item another tag (the server says its
/// content changed); `SIGHUP` and a disk purge forget every record. This is what keeps a repeated `--once`
/// over a gallery with broken items from asking for each of them every time.
struct UnusableAnswerOnRecord: Error, Sendable, CustomStringConvertible {
    let key: AssetKey
    let answer: UnusableAnswer
    let retryAt: Date

    var description: String {
        "\(answer.reason) (answered at \(LogfmtFormatter.timestampString(answer.answeredAt)); "
            + "asked again after \(LogfmtFormatter.timestampString(retryAt)) or when its feed tag changes)"
    }
}
