import EmbeddedHTTP
import TestSupport

extension ProcessResources {
    /// Threads of the servers of this target's tests, which carry the default name (`embedded-http`); a test
    /// that counts them while other suites' servers run names its own server's threads and counts those.
    static var serverThreads: Int { current().threads(named: HTTPServer.defaultThreadName) }
}
