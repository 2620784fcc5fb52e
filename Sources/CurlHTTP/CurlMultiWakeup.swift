import CCurl

/// The one operation on a multi handle that may come from any thread: `curl_multi_wakeup`.
///
/// libcurl documents `curl_multi_wakeup` as safe to call from another thread while the owner
/// is inside `curl_multi_poll`; every other use of the handle stays on the loop thread, which
/// is why this wrapper exposes nothing else.
// ``CurlLoopMailbox`` calls it only under its lock while the phase says the handle is alive; the
// loop removes it (`markStopped`) under that lock before `curl_multi_cleanup`.
// SAFETY: only `curl_multi_wakeup` (thread-safe per libcurl) is reachable, and only while the handle lives.
struct CurlMultiWakeup: @unchecked Sendable {
    private let multi: UnsafeMutableRawPointer

    /// Wraps the multi handle the loop thread owns.
    init(_ multi: UnsafeMutableRawPointer) {
        self.multi = multi
    }

    /// Interrupts a `curl_multi_poll` in progress, or makes the next one return at once (`curl_multi_wakeup`).
    func wake() {
        _ = curl_multi_wakeup(multi)
    }
}
