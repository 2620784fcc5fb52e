import CCurl

/// One HTTP GET in progress: a libcurl easy handle taken from the loop's shelf, plus the buffers its callbacks fill.
///
/// Confined to the loop thread: it is created, driven by `curl_multi_perform` (which calls the
/// write and header callbacks on that thread) and destroyed there, so it is deliberately not
/// `Sendable`. libcurl reaches it through an unretained pointer (`CURLOPT_WRITEDATA`,
/// `CURLOPT_HEADERDATA`, `CURLOPT_PRIVATE`); the loop's table of active transfers keeps it
/// alive for as long as the easy handle is on the multi handle, and the loop hands the handle back to its shelf
/// only after the transfer's results are read, so libcurl never holds a dangling pointer.
///
/// Invariant: ``body`` never holds more than ``maxBodySize`` bytes, and its capacity is grown
/// by hand so it never reserves more than that either.
final class CurlTransfer {
    /// The request this transfer serves.
    let request: CurlLoopMailbox.Request
    /// The easy handle, with the client's options and this request's set.
    let handle: EasyHandle
    /// The libcurl easy handle (`CURL *`).
    var easy: UnsafeMutableRawPointer { handle.pointer }
    /// The most bytes the body may have.
    let maxBodySize: Int
    /// The configuration the options were set from (for timeout messages).
    let configuration: HTTPClientConfiguration
    /// The proxy the request goes through (`CURLOPT_PROXY`), nil for a direct connection.
    let proxy: HTTPProxy?
    /// The client's shared receive budget (`--bwlimit`), nil for no limit.
    let budget: ReceiveBudget?
    /// Body bytes received so far.
    private(set) var body: [UInt8] = []
    /// Headers of the latest response received so far.
    private(set) var headers = HTTPHeaders()
    /// Set when the write callback refused data because of ``maxBodySize``.
    private(set) var exceededBodyLimit = false
    /// Body bytes received so far, kept or not (in ``body``, in the request's sink, or dropped).
    private(set) var receivedBodyBytes = 0
    /// Set when the request's body sink refused a chunk (its ``HTTPBodySink/failureDescription`` says why).
    private(set) var sinkFailed = false
    /// Set when the write callback paused the transfer (the shared budget had no tokens): its handle is not kept
    /// for another request, which would otherwise start with whatever state libcurl keeps for a paused transfer.
    private(set) var wasPaused = false
    /// Whether this response's body goes to the request's sink: decided at the first chunk, from the status.
    private var writesToSink: Bool?
    /// The extra request headers (`CURLOPT_HTTPHEADER`); libcurl reads the list during the
    /// transfer, so it lives as long as the transfer and is freed after it.
    private var headerList: UnsafeMutablePointer<curl_slist>?

    /// Sets this request's options on `handle` (the client's are set already); throws if libcurl rejects one.
    init(
        request: CurlLoopMailbox.Request, handle: EasyHandle, configuration: HTTPClientConfiguration,
        budget: ReceiveBudget? = nil
    ) throws(HTTPClientError) {
        self.request = request
        self.handle = handle
        self.maxBodySize = request.maxBodySize ?? configuration.maxBodySize
        self.configuration = configuration
        self.proxy = configuration.proxyEnvironment.proxy(scheme: request.url.scheme, host: request.url.host)
        self.budget = budget
        try configure()
    }

    deinit {
        curl_slist_free_all(headerList)
    }

    /// libcurl's detailed error text for this transfer, if it wrote any.
    var errorDetail: String? { handle.errorDetail }

    /// Sets every option a request may differ in. A handle the shelf kept still has the last request's, so each of
    /// them is set here every time, to this request's value or to none.
    private func configure() throws(HTTPClientError) {
        let this = Unmanaged.passUnretained(self).toOpaque()
        let option = EasyOption(easy: easy, url: request.url.string)
        try option.set(CURLOPT_URL, request.url.string, "CURLOPT_URL")
        // The proxy decided from the environment (ProxyEnvironment); "" makes libcurl ignore the environment,
        // so that it cannot pick a proxy an error message would not know about.
        try option.set(CURLOPT_PROXY, proxy?.url ?? "", "CURLOPT_PROXY")
        // Refuse early when the server declares a larger body; the write callback covers the rest.
        try option.check(
            emojiart_curl_easy_setopt_offset(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(maxBodySize)),
            "CURLOPT_MAXFILESIZE_LARGE")
        try setHeaderList(request.headerLines, option)
        try option.check(emojiart_curl_easy_setopt_pointer(easy, CURLOPT_PRIVATE, this), "CURLOPT_PRIVATE")
        try option.check(emojiart_curl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, this), "CURLOPT_WRITEDATA")
        try option.check(emojiart_curl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, this), "CURLOPT_HEADERDATA")
    }

    /// Builds the `curl_slist` of extra header lines (libcurl copies each string) and hands it to the handle; no
    /// lines, no list (which also clears the list a kept handle's last request had).
    private func setHeaderList(_ lines: [String], _ option: EasyOption) throws(HTTPClientError) {
        for line in lines {
            guard let appended = curl_slist_append(headerList, line) else {
                throw HTTPClientError(
                    kind: .transport, url: request.url.string,
                    message: "libcurl could not store a request header for \(request.url.string)", call: "curl_slist_append")
            }
            headerList = appended
        }
        try option.check(emojiart_curl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList), "CURLOPT_HTTPHEADER")
    }

    /// What the write callback answers libcurl for `chunk`: its length when taken, `CURL_WRITEFUNC_PAUSE` when
    /// the shared budget has no tokens (libcurl keeps the chunk and offers it again after the loop resumes the
    /// transfer), 0 when it is refused (``maxBodySize``), which aborts the transfer.
    fileprivate func receive(_ chunk: UnsafeRawBufferPointer) -> Int {
        if let budget {
            guard budget.hasTokens() else {
                budget.notePaused(request.id)
                wasPaused = true
                return Int(emojiart_curl_writefunc_pause())
            }
            budget.spend(chunk.count)
        }
        return receiveBody(chunk) ? chunk.count : 0
    }

    /// Takes `chunk` into ``body``, or the request's sink for a `200`; refuses it (returns `false`) if the body
    /// would exceed ``maxBodySize`` or the sink fails.
    fileprivate func receiveBody(_ chunk: UnsafeRawBufferPointer) -> Bool {
        guard receivedBodyBytes + chunk.count <= maxBodySize else {
            exceededBodyLimit = true
            return false
        }
        receivedBodyBytes += chunk.count
        guard let sink = request.bodySink else { return keepInMemory(chunk) }
        if writesToSink == nil { writesToSink = longInfo(CURLINFO_RESPONSE_CODE) == 200 }
        if writesToSink == true {
            sinkFailed = !sink.write(chunk)
            return !sinkFailed
        }
        // Another status's body, with a sink given: enough of it for a message, the rest counted and dropped.
        let room = HTTPBodySinkLimits.otherStatusBodyLimit - body.count
        return room <= 0 || keepInMemory(UnsafeRawBufferPointer(rebasing: chunk.prefix(room)))
    }

    /// Appends `chunk` to ``body`` (``receivedBodyBytes`` has counted it and checked the limit).
    private func keepInMemory(_ chunk: UnsafeRawBufferPointer) -> Bool {
        let newCount = body.count + chunk.count
        if newCount > body.capacity {
            // Grow geometrically, but never past the limit; start at the declared length if known.
            var target = max(newCount, body.capacity * 2)
            if body.isEmpty, let declared = declaredContentLength, declared > newCount { target = declared }
            body.reserveCapacity(min(target, maxBodySize))
        }
        body.append(contentsOf: chunk)
        return true
    }

    /// Header callback body: keeps `Name: value` lines; a status line starts a new header set
    /// (after `100 Continue`, or the proxy's `200 Connection established`). Works on the bytes: the name and the
    /// value (without the line end and the blanks around it) are the only strings made, once per header.
    fileprivate func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) {
        var end = bytes.count
        while end > 0, bytes[end - 1] == UInt8(ascii: "\n") || bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let line = UnsafeRawBufferPointer(rebasing: bytes[..<end])
        if line.starts(with: "HTTP/".utf8) {
            headers.removeAll()
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var start = colon + 1
        var stop = line.count
        while start < stop, isBlank(line[start]) { start += 1 }
        while stop > start, isBlank(line[stop - 1]) { stop -= 1 }
        let name = String(decoding: UnsafeRawBufferPointer(rebasing: line[..<colon]), as: UTF8.self)
        let value = String(decoding: UnsafeRawBufferPointer(rebasing: line[start..<stop]), as: UTF8.self)
        headers.append(.init(name: name, value: value))
    }

    /// The `Content-Length` the server declared (`CURLINFO_CONTENT_LENGTH_DOWNLOAD_T`), if any.
    var declaredContentLength: Int? {
        let value = offsetInfo(CURLINFO_CONTENT_LENGTH_DOWNLOAD_T)
        return value >= 0 ? Int(value) : nil
    }

    /// A `long` from `curl_easy_getinfo`, or 0 if libcurl does not know it.
    func longInfo(_ info: CURLINFO) -> Int {
        var value = 0
        return emojiart_curl_easy_getinfo_long(easy, info, &value) == CURLE_OK ? value : 0
    }

    /// A string from `curl_easy_getinfo` (copied), or nil if libcurl has none.
    func stringInfo(_ info: CURLINFO) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard emojiart_curl_easy_getinfo_string(easy, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }

    /// A `curl_off_t` from `curl_easy_getinfo`, or -1 if libcurl does not know it.
    func offsetInfo(_ info: CURLINFO) -> Int64 {
        var value: curl_off_t = -1
        return emojiart_curl_easy_getinfo_offset(easy, info, &value) == CURLE_OK ? Int64(value) : -1
    }
}

@available(*, unavailable, message: "A transfer is confined to the loop thread")
extension CurlTransfer: Sendable {}

extension CurlTransfer {
    /// Finds the transfer that owns `easy` through `CURLINFO_PRIVATE`.
    static func owning(_ easy: UnsafeMutableRawPointer) -> CurlTransfer? {
        var pointer: UnsafeMutableRawPointer?
        guard emojiart_curl_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &pointer) == CURLE_OK, let pointer else {
            return nil
        }
        return Unmanaged<CurlTransfer>.fromOpaque(pointer).takeUnretainedValue()
    }
}

/// `CURLOPT_WRITEFUNCTION`: hands body bytes to the transfer; returning less than offered
/// (0) makes libcurl abort with `CURLE_WRITE_ERROR`, which is how the size limit stops a transfer, and
/// `CURL_WRITEFUNC_PAUSE` pauses it (the bandwidth limit).
let curlWriteBody: emojiart_curl_write_callback = { data, size, count, userdata in
    guard let userdata else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    let length = size * count
    guard length > 0, let data else { return length }
    return transfer.receive(UnsafeRawBufferPointer(start: data, count: length))
}

/// `CURLOPT_HEADERFUNCTION`: hands one complete header line (with its CRLF) to the transfer.
let curlWriteHeader: emojiart_curl_write_callback = { data, size, count, userdata in
    let length = size * count
    guard let userdata, let data, length > 0 else { return length }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    transfer.receiveHeaderLine(UnsafeRawBufferPointer(start: data, count: length))
    return length
}
