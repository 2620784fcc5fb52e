import Dispatch
import Glibc

/// Turns process signals into an async sequence, for a graceful stop on SIGINT and SIGTERM.
///
/// Installing ignores the signals' default action (`signal(2)` with `SIG_IGN`) and watches them
/// with Dispatch signal sources instead, so a signal that arrives at any time after ``init(signals:)``
/// is delivered to ``signals``, never lost and never fatal. Create it before announcing the
/// server, so that a script that reads the URL and at once sends SIGTERM gets a clean exit.
struct SignalWatcher: ~Copyable {
    /// Signal numbers as they arrive.
    let signals: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    /// Starts watching `signals` (e.g. `[SIGINT, SIGTERM]`).
    init(signals watched: [Int32]) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        var sources: [any DispatchSourceSignal] = []
        for number in watched {
            // The corresponding C call is signal(2): drop the default (terminate) action.
            _ = Glibc.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                continuation.yield(number)
            }
            source.resume()
            sources.append(source)
        }
        self.signals = stream
        self.sources = sources
    }

    /// Waits for the next watched signal and returns its number.
    func next() async -> Int32? {
        var iterator = signals.makeAsyncIterator()
        return await iterator.next()
    }

    deinit {
        for source in sources {
            source.cancel()
        }
    }

    /// A signal's conventional name, e.g. `SIGTERM`, for the log.
    static func name(of number: Int32) -> String {
        switch number {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        default: "signal \(number)"
        }
    }
}
