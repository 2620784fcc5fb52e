/// Small text helpers for header lines and libcurl messages.
extension String {
    /// The string without trailing CR and LF characters.
    func trimmingTrailingNewlines() -> String {
        var end = endIndex
        while end > startIndex, let last = self[..<end].last, last == "\n" || last == "\r" || last == "\r\n" {
            end = index(before: end)
        }
        return String(self[..<end])
    }

    /// The string without leading and trailing spaces and horizontal tabs.
    func trimmingSpacesAndTabs() -> String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
