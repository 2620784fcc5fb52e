import EmbeddedHTTP
import TestSupport

extension ProcessResources {
    /// Threads of the servers, by the name EmbeddedHTTP gives them (`embedded-http`): the suites of this target
    /// run their servers one at a time.
    static var serverThreads: Int { current().threads(named: HTTPServer.threadName) }
}
