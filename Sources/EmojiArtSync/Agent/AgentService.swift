import ServiceLifecycle

/// One of the background agent's loops (watch, schedule, status, disk purge, requests, scrub, watchdog, signals)
/// as a swift-service-lifecycle `Service`: a small type holding only what its loop needs, so that one
/// `ServiceGroup` starts them all and stops them all when the agent stops.
protocol AgentService: Service {
    /// The name the service group's log lines give it.
    var name: String { get }
    /// The loop itself: runs until its work is over or its task is cancelled.
    func loop() async
}

extension AgentService {
    /// Runs the loop until it ends or the group shuts down gracefully, which cancels the loop's task, and with it
    /// everything it was awaiting (the loads only it waited for included).
    func run() async throws {
        await cancelWhenGracefulShutdown { await loop() }
    }

    /// How the agent's group runs it: a loop that ends early (the watcher falling back to rescans, a watchdog
    /// that is off, an inbox that cannot be watched) leaves the others running. No loop throws.
    var groupConfiguration: ServiceGroupConfiguration.ServiceConfiguration {
        ServiceGroupConfiguration.ServiceConfiguration(service: self, successTerminationBehavior: .ignore, serviceName: name)
    }
}
