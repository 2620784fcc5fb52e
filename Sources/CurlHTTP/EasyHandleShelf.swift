import CCurl

/// One libcurl easy handle (`CURL *`) with the client's options set, and the error buffer libcurl writes into.
///
/// Confined to the loop thread, as the transfers that use it. Cleaned up with its owner, whoever that is last
/// (the shelf, or a transfer the loop did not hand back).
final class EasyHandle {
    /// The libcurl easy handle.
    let pointer: UnsafeMutableRawPointer
    /// libcurl's detailed error text (`CURLOPT_ERRORBUFFER`, `CURL_ERROR_SIZE` bytes), emptied before each transfer.
    let errorBuffer: UnsafeMutablePointer<CChar>

    fileprivate init(pointer: UnsafeMutableRawPointer) {
        self.pointer = pointer
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        curl_easy_cleanup(pointer)
        errorBuffer.deallocate()
    }

    /// libcurl's detailed error text of the latest transfer, if it wrote any.
    var errorDetail: String? {
        let text = String(cString: errorBuffer).trimmingTrailingNewlines()
        return text.isEmpty ? nil : text
    }
}

@available(*, unavailable, message: "An easy handle is confined to the loop thread")
extension EasyHandle: Sendable {}

/// The loop's easy handles between transfers: a finished transfer's handle is kept, with the client's options still
/// set, and the next request takes it and sets only what is its own (URL, proxy, headers, size limit, callbacks'
/// target), as libcurl's documentation advises ("re-use handles"). A new handle and its twenty options cost about
/// as much as libcurl's own work on a small response; at 100,000 small images they were made and freed 100,000 times.
///
/// What a handle remembers between transfers is only options: the connections stay in the multi handle's cache,
/// and every option a request may differ in is set again for each (``CurlTransfer``). At most `capacity` handles
/// wait on the shelf (the loop's concurrent transfers): more are cleaned up.
final class EasyHandleShelf {
    private let configuration: HTTPClientConfiguration
    /// `CURLOPT_BUFFERSIZE`: the curl tool's, smaller under a bandwidth limit (a chunk may overdraw the shared
    /// budget by one buffer).
    private let receiveBufferSize: Int
    private let capacity: Int
    private var idle: [EasyHandle] = []
    /// Easy handles made since the loop started (`curl_easy_init` calls), for the client's statistics.
    private(set) var handlesMade = 0

    /// `CURLOPT_BUFFERSIZE`, as the curl tool sets it: a 50 KB image comes in one `recv` and one turn of the loop
    /// instead of four (libcurl's default is 16 KiB). Only transfers in progress hold one.
    static let receiveBufferSize = 100 * 1024

    init(configuration: HTTPClientConfiguration, budget: ReceiveBudget?) {
        self.configuration = configuration
        self.receiveBufferSize = budget?.receiveBufferSize(largest: Self.receiveBufferSize) ?? Self.receiveBufferSize
        self.capacity = max(1, configuration.maxConcurrentRequests)
    }

    /// A handle with the client's options set: one that waited on the shelf, or a new one. Throws when libcurl
    /// cannot make one or refuses an option (`url` names the request in the error).
    func take(for url: String) throws(HTTPClientError) -> EasyHandle {
        if let handle = idle.popLast() {
            handle.errorBuffer[0] = 0
            return handle
        }
        guard let pointer = curl_easy_init() else {
            throw HTTPClientError(
                kind: .transport, url: url, message: "libcurl could not create a transfer for \(url)",
                call: "curl_easy_init")
        }
        handlesMade += 1
        let handle = EasyHandle(pointer: pointer)
        try configure(handle, url: url)
        return handle
    }

    /// Keeps `handle` for the next request, or cleans it up when the shelf is full. Only the handle of a transfer
    /// libcurl finished (`CURLMSG_DONE`) and never paused, off the multi handle, its results read: a cancelled or
    /// paused transfer's handle goes with it.
    func putBack(_ handle: EasyHandle) {
        guard idle.count < capacity else { return }
        idle.append(handle)
    }

    /// Sets the options every request of the client shares. The rationale for each is next to it; the
    /// security-relevant ones are the protocol limit, no redirects followed by libcurl (the client follows same-host
    /// ones itself, ``RedirectRule``), and leaving TLS verification at libcurl's default (on).
    private func configure(_ handle: EasyHandle, url: String) throws(HTTPClientError) {
        let easy = handle.pointer
        let option = EasyOption(easy: easy, url: url)
        // Signals are process-wide; a library must not install SIGALRM handlers for DNS timeouts.
        try option.set(CURLOPT_NOSIGNAL, 1, "CURLOPT_NOSIGNAL")
        try option.set(CURLOPT_PROTOCOLS_STR, "http,https", "CURLOPT_PROTOCOLS_STR")
        try option.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https", "CURLOPT_REDIR_PROTOCOLS_STR")
        // A redirect could lead to another host; the client sees the 3xx and decides (RedirectRule).
        try option.set(CURLOPT_FOLLOWLOCATION, 0, "CURLOPT_FOLLOWLOCATION")
        if let file = configuration.caCertificateFile {
            try option.set(CURLOPT_CAINFO, file, "CURLOPT_CAINFO")
        }
        try option.set(CURLOPT_HTTPGET, 1, "CURLOPT_HTTPGET")
        try option.set(CURLOPT_HTTP_VERSION, configuration.httpVersion.curlOptionValue, "CURLOPT_HTTP_VERSION")
        if configuration.httpVersion.waitsToMultiplex {
            try option.set(CURLOPT_PIPEWAIT, 1, "CURLOPT_PIPEWAIT")
        }
        // Empty string: offer every encoding libcurl can decode; the body we hand back is decoded.
        try option.set(CURLOPT_ACCEPT_ENCODING, "", "CURLOPT_ACCEPT_ENCODING")
        try option.set(CURLOPT_USERAGENT, configuration.userAgent, "CURLOPT_USERAGENT")
        try option.set(CURLOPT_BUFFERSIZE, receiveBufferSize, "CURLOPT_BUFFERSIZE")
        try option.set(
            CURLOPT_CONNECTTIMEOUT_MS, configuration.connectTimeout.wholeMillisecondsRoundedUp, "CURLOPT_CONNECTTIMEOUT_MS")
        try option.set(CURLOPT_TIMEOUT_MS, configuration.totalTimeout.wholeMillisecondsRoundedUp, "CURLOPT_TIMEOUT_MS")
        try option.set(CURLOPT_LOW_SPEED_LIMIT, configuration.lowSpeedLimitBytesPerSecond, "CURLOPT_LOW_SPEED_LIMIT")
        try option.set(CURLOPT_LOW_SPEED_TIME, configuration.lowSpeedTime.wholeSecondsRoundedUp, "CURLOPT_LOW_SPEED_TIME")
        try option.check(
            emojiart_curl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, handle.errorBuffer), "CURLOPT_ERRORBUFFER")
        try option.check(emojiart_curl_easy_setopt_write_function(easy, curlWriteBody), "CURLOPT_WRITEFUNCTION")
        try option.check(emojiart_curl_easy_setopt_header_function(easy, curlWriteHeader), "CURLOPT_HEADERFUNCTION")
    }
}

@available(*, unavailable, message: "The shelf is confined to the loop thread")
extension EasyHandleShelf: Sendable {}

/// `curl_easy_setopt` for one handle, an error naming the option and the request's URL when libcurl refuses.
struct EasyOption {
    let easy: UnsafeMutableRawPointer
    let url: String

    func set(_ option: CURLoption, _ value: Int, _ name: String) throws(HTTPClientError) {
        try check(emojiart_curl_easy_setopt_long(easy, option, value), name)
    }

    func set(_ option: CURLoption, _ value: String, _ name: String) throws(HTTPClientError) {
        // libcurl copies string options (since 7.17), so the pointer need not outlive the call.
        try check(value.withCString { emojiart_curl_easy_setopt_string(easy, option, $0) }, name)
    }

    func check(_ code: CURLcode, _ option: String) throws(HTTPClientError) {
        guard code == CURLE_OK else {
            throw .easy("curl_easy_setopt(\(option))", code, url: url)
        }
    }
}
