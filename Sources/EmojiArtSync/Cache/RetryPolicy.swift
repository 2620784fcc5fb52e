/// Exponential backoff with jitter for remembered failures: `base * 2^(attempt-1)`, capped at `cap`, then
/// multiplied by a random factor in `1 - jitter ... 1`, so many agents (or many keys) do not retry in step.
///
/// Defaults: a first retry after about 2 s, doubling up to a 5 minute cap, which bounds how long a gallery
/// that came back stays unsynced while keeping a dead gallery to one request per key every few minutes.
struct RetryPolicy: Sendable, Equatable {
    var base: Duration
    var cap: Duration
    /// Fraction of the delay that is randomised away, 0...1.
    var jitter: Double
    /// The wait after an answer that is not an image (not a network failure): an hour by default, so an idle
    /// agent next to a gallery with broken items does not ask for each of them every few minutes.
    var unusableAnswer: Duration

    init(
        base: Duration = .seconds(2), cap: Duration = .seconds(300), jitter: Double = 0.2,
        unusableAnswer: Duration = .seconds(3600)
    ) {
        self.base = base
        self.cap = cap
        self.jitter = min(max(jitter, 0), 1)
        self.unusableAnswer = unusableAnswer
    }

    /// `unusableAnswer`, jittered like the other delays so many such items do not come due together.
    var unusableAnswerDelay: Duration {
        unusableAnswer * (1 - jitter * JitterRandom.number(in: 0...1))
    }

    /// The delay before retry number `attempt` (1 = after the first failure).
    func delay(afterAttempt attempt: Int, random: Double = JitterRandom.number(in: 0...1)) -> Duration {
        let exponent = min(max(attempt - 1, 0), 30)
        let raw = base * (1 << exponent)
        let capped = raw > cap ? cap : raw
        return capped * (1 - jitter * random)
    }
}
