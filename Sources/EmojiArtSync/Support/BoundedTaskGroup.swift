/// Runs `work` for every element of `elements` as child tasks of a task group, never more than `limit` of
/// them alive at once, and hands each result to `collect` on the caller's isolation, in completion order.
///
/// This is how a pass over a feed of any size holds a bounded window of pending accesses instead of a task
/// per entry: the next element is started only when one in the window has finished. Returns the largest
/// number of children that were alive at once (a test checks it against the bound).
@discardableResult
func forEachBounded<Element: Sendable, Result: Sendable>(
    _ elements: some Sequence<Element>,
    limit: Int,
    isolation: isolated (any Actor)? = #isolation,
    work: @escaping @Sendable (Element) async -> Result,
    collect: (Result) -> Void = { _ in }
) async -> Int {
    let limit = max(1, limit)
    var peak = 0
    await withTaskGroup(of: Result.self) { group in
        _ = isolation  // captured, so the body (and `collect`) runs on the caller's isolation (SE-0420)
        var alive = 0
        for element in elements {
            if alive == limit, let result = await group.next() {
                alive -= 1
                collect(result)
            }
            if Task.isCancelled { break }
            group.addTask { await work(element) }
            alive += 1
            peak = max(peak, alive)
        }
        while let result = await group.next() {
            collect(result)
        }
    }
    return peak
}
