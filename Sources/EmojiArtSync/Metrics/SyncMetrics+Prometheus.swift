import Prometheus

extension SyncMetrics {
    /// Metrics recorded into `registry` (what `--metrics-listen` serves), each with its `# HELP` line.
    public init(registry: PrometheusCollectorRegistry) {
        self.init(factory: DescribedPrometheusFactory(registry: registry, help: Self.help))
    }
}
