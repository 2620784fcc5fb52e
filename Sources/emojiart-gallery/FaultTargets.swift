import ArgumentParser

/// The images a fault option applies to: `all`, or a comma-separated list of N's (`3,7,12`).
struct FaultTargets: ExpressibleByArgument, Sendable, Equatable {
    /// Every image without a fault of its own.
    var all: Bool
    /// The listed images, when not `all`.
    var numbers: [Int]

    init(all: Bool, numbers: [Int]) {
        self.all = all
        self.numbers = numbers
    }

    /// Parses `all` or `N[,N...]` with N >= 1; `nil` (a usage error) for anything else.
    init?(argument: String) {
        if argument == "all" {
            self.init(all: true, numbers: [])
            return
        }
        let parts = argument.split(separator: ",", omittingEmptySubsequences: false)
        var numbers: [Int] = []
        for part in parts {
            guard let n = Int(part.trimmingPrefix(" ")), n >= 1 else { return nil }
            numbers.append(n)
        }
        guard !numbers.isEmpty else { return nil }
        self.init(all: false, numbers: numbers)
    }

    static var defaultCompletionKind: CompletionKind {
        .list(["all"])
    }
}
