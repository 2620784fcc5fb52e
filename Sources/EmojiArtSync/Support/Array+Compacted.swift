extension Array {
    /// The elements in an array whose capacity is about their count: a table a reader reserved room for as it
    /// read (for as many keys as the body could hold) and that is then kept for as long as the agent runs.
    func compacted() -> [Element] {
        guard capacity > count + count / 16 + 16 else { return self }
        var copy: [Element] = []
        copy.reserveCapacity(count)
        copy.append(contentsOf: self)
        return copy
    }
}
