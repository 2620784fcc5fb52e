import ServiceLifecycle

/// One of the background agent's loops (watching, scheduling, status, purges, scrub, watchdog, signals) as
/// a swift-service-lifecycle `Service`, so one `ServiceGroup` starts them, and stops them all when the agent
/// stops: a graceful shutdown cancels the loop's task, and everything it was awaiting with it.
struct AgentLoop: Service, CustomStringConvertible {
    let description: String
    private let body: @Sendable () async -> Void

    init(_ name: String, _ body: @escaping @Sendable () async -> Void) {
        self.description = name
        self.body = body
    }

    func run() async throws {
        await cancelWhenGracefulShutdown(body)
    }
}
