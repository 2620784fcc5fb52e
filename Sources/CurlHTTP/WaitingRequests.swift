/// The requests waiting for a transfer slot: one first-in, first-out queue per `RequestPriority`, urgent ones
/// handed out first. Owned by the `CurlMultiLoop` (its thread only).
struct WaitingRequests {
    private var urgent = Queue()
    private var normal = Queue()

    /// Requests held, cancelled ones included until their turn comes.
    var count: Int { urgent.count + normal.count }
    var isEmpty: Bool { count == 0 }

    mutating func append(_ request: CurlLoopMailbox.Request) {
        if request.priority == .urgent { urgent.append(request) } else { normal.append(request) }
    }

    /// The next request to start: the oldest urgent one, else the oldest normal one.
    mutating func popFirst() -> CurlLoopMailbox.Request? {
        urgent.popFirst() ?? normal.popFirst()
    }

    /// Empties both queues, returning what they held.
    mutating func removeAll() -> [CurlLoopMailbox.Request] {
        urgent.removeAll() + normal.removeAll()
    }

    /// An array read from a moving head, compacted when the consumed part is at least half of it.
    private struct Queue {
        private var requests: [CurlLoopMailbox.Request] = []
        private var head = 0

        var count: Int { requests.count - head }

        mutating func append(_ request: CurlLoopMailbox.Request) {
            if head > 0 && head * 2 >= requests.count {
                requests.removeFirst(head)
                head = 0
            }
            requests.append(request)
        }

        mutating func popFirst() -> CurlLoopMailbox.Request? {
            guard head < requests.count else { return nil }
            let request = requests[head]
            head += 1
            if head == requests.count {
                requests.removeAll(keepingCapacity: true)
                head = 0
            }
            return request
        }

        mutating func removeAll() -> [CurlLoopMailbox.Request] {
            defer {
                requests.removeAll()
                head = 0
            }
            return Array(requests[head...])
        }
    }
}
