import CCurl

/// The bytes per second all transfers of one client may receive together (`--bwlimit`): a token bucket the
/// write callbacks draw on, refilled at ``bytesPerSecond`` and holding at most ``burst``.
///
/// How it limits: a write callback that finds the bucket empty answers `CURL_WRITEFUNC_PAUSE`, which makes
/// libcurl keep that chunk and stop reading the transfer's socket (TCP's flow control then slows the sender);
/// the loop resumes every paused transfer (`curl_easy_pause(CURLPAUSE_CONT)`) once the bucket has tokens again,
/// and sleeps no longer than that. A chunk taken with tokens left may overdraw the bucket by up to one receive
/// buffer, which the next pause repays, so over any stretch longer than a few buffers the rate is the limit.
/// Chosen over dividing the rate among transfers (`CURLOPT_MAX_RECV_SPEED_LARGE`, per transfer, set when it
/// starts): that leaves budget unused while some transfers wait for their server and cannot follow transfers
/// that come and go. Every transfer that has data competes for the same tokens, and all paused ones resume
/// together, so each gets about an equal share; an urgent request (a repair) is started before the waiting ones
/// and then shares like the rest.
///
/// Confined to the loop thread, as the transfers that draw on it are.
final class ReceiveBudget {
    /// The limit.
    let bytesPerSecond: Int
    /// The most tokens the bucket holds: a tenth of a second's worth, at least one small buffer.
    let burst: Double
    private var tokens: Double
    private var refilledAt: ContinuousClock.Instant
    /// Requests whose write callback paused because the bucket was empty, in the order they paused.
    private(set) var paused: [UInt64] = []

    init(bytesPerSecond: Int) {
        self.bytesPerSecond = max(1, bytesPerSecond)
        burst = max(Double(self.bytesPerSecond) / 10, Double(Self.smallestReceiveBuffer))
        tokens = burst
        refilledAt = .now
    }

    /// libcurl's smallest `CURLOPT_BUFFERSIZE`.
    static let smallestReceiveBuffer = 1024

    /// The receive buffer a transfer should use under this limit: a tenth of a second's worth (so a chunk
    /// overdraws the bucket by little), between libcurl's minimum and `largest`.
    func receiveBufferSize(largest: Int) -> Int {
        min(largest, max(Self.smallestReceiveBuffer, bytesPerSecond / 10))
    }

    /// Whether a chunk may be taken now; refills first.
    func hasTokens() -> Bool {
        refill()
        return tokens > 0
    }

    /// Takes `count` bytes' worth of tokens (the bucket may go below zero: see the type's comment).
    func spend(_ count: Int) {
        tokens -= Double(count)
    }

    /// Remembers that request `id` paused for want of tokens.
    func notePaused(_ id: UInt64) {
        paused.append(id)
    }

    /// The paused requests, forgotten here: the caller resumes them.
    func takePaused() -> [UInt64] {
        defer { paused.removeAll(keepingCapacity: true) }
        return paused
    }

    /// Milliseconds until the bucket has tokens again (0 if it has), rounded up.
    func millisecondsUntilTokens() -> Int32 {
        refill()
        guard tokens <= 0 else { return 0 }
        let seconds = (1 - tokens) / Double(bytesPerSecond)
        return Int32(min(Double(Int32.max), (seconds * 1000).rounded(.up)))
    }

    private func refill() {
        let now = ContinuousClock.now
        let elapsed = refilledAt.duration(to: now)
        refilledAt = now
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        tokens = min(burst, tokens + seconds * Double(bytesPerSecond))
    }
}

@available(*, unavailable, message: "A budget is confined to the loop thread")
extension ReceiveBudget: Sendable {}
