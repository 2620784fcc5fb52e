import CoreMetrics
import Prometheus

/// swift-prometheus' `PrometheusMetricsFactory`, plus a `# HELP` line for every metric: swift-metrics has no
/// place for help text, and a metric family without one fails `promtool check metrics`.
///
/// Makes each handle through the registry's `MetricNameDescriptor` calls with the help text it is given for the
/// metric's name (a name it has no text for gets none); destroying and everything else is the wrapped factory's.
struct DescribedPrometheusFactory: MetricsFactory {
    private let base: PrometheusMetricsFactory
    private let help: [String: String]

    /// A factory on `registry`; `help` maps each metric name to its one-line description.
    init(registry: PrometheusCollectorRegistry, help: [String: String]) {
        self.base = PrometheusMetricsFactory(registry: registry)
        self.help = help
    }

    private var registry: PrometheusCollectorRegistry { base.registry }

    private func descriptor(_ label: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: label, unitName: "", helpText: help[label] ?? "")
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        dimensions.isEmpty
            ? registry.makeCounter(descriptor: descriptor(label))
            : registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        dimensions.isEmpty
            ? registry.makeCounter(descriptor: descriptor(label))
            : registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard !aggregate else { return base.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate) }
        return dimensions.isEmpty
            ? registry.makeGauge(descriptor: descriptor(label))
            : registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        dimensions.isEmpty
            ? registry.makeGauge(descriptor: descriptor(label))
            : registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        guard dimensions.isEmpty else { return base.makeTimer(label: label, dimensions: dimensions) }
        return registry.makeDurationHistogram(descriptor: descriptor(label), buckets: base.defaultDurationHistogramBuckets)
    }

    func destroyCounter(_ handler: any CounterHandler) { base.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { base.destroyFloatingPointCounter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { base.destroyRecorder(handler) }
    func destroyMeter(_ handler: any MeterHandler) { base.destroyMeter(handler) }
    func destroyTimer(_ handler: any TimerHandler) { base.destroyTimer(handler) }
}
