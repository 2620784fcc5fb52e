import CShims

/// Gives the memory freed by a pass back to the kernel, so an agent's RSS follows what it holds, not the peak
/// of its last pass. glibc keeps freed memory in per-thread arenas; after a pass over a large feed (tens of
/// thousands of short-lived allocations on several threads) that is tens of MiB per pass, which looks like a
/// leak to anyone watching RSS.
enum FreedMemory {
    /// Runs glibc's `malloc_trim(0)` on the blocking-I/O pool (it takes the arenas' locks and walks them: a few
    /// milliseconds at 100,000 assets, never on an actor).
    static func release() async {
        _ = await BlockingIO.run { emojiart_release_free_heap() }
    }
}
