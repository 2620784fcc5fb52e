import Synchronization

/// One decision of a dry run (`--once --dry-run`): what the real run would do to one file of DIR or one item of
/// the feed. `line` is what a person and a script read: the action, the file's name (or the item's URL when it
/// has none), then `key=value` details, logfmt-quoted.
public struct DryRunDecision: Sendable, Equatable {
    /// The actions, in the order the plan lists them.
    public enum Action: String, Sendable, CaseIterable, Comparable {
        case fetch = "would-fetch"
        case replace = "would-replace"
        case adopt = "would-adopt"
        case refresh = "would-refresh"
        case remove = "would-remove"
        /// A file of an item gone from the feed that the deletion guard (`--max-delete`) keeps.
        case keep = "would-keep"
        case conflict = "would-conflict"
        case refuse = "would-refuse"

        public static func < (left: Action, right: Action) -> Bool { left.rank < right.rank }

        /// Its place in the plan's order (the order of the cases).
        private var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }

        /// The word of the summary line: the action without its prefix.
        public var word: String { String(rawValue.dropFirst("would-".count)) }

        /// Whether the real run would end without the asset (exit status 2, partial).
        var leavesAssetMissing: Bool { self == .conflict || self == .refuse }
    }

    let action: Action
    /// The file's name in DIR, or a refused item's URL.
    let subject: String
    /// `key=value` pairs, in order.
    public let details: [(key: String, value: String)]

    public var line: String {
        ([action.rawValue, Self.quoted(subject)] + details.map { "\($0.key)=\(Self.quoted($0.value))" }).joined(separator: " ")
    }

    public static func == (left: DryRunDecision, right: DryRunDecision) -> Bool { left.line == right.line }

    /// A value as logfmt writes it: bare when it has no space, quote or `=`, else in double quotes with `"` and `\`
    /// escaped.
    static func quoted(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0 == "\\" }) else {
            return value
        }
        var text = "\""
        for character in value {
            if character == "\"" || character == "\\" { text.append("\\") }
            text.append(character)
        }
        return text + "\""
    }
}

/// What a dry run decided, gathered from the steps of the feed's application (`FeedApplication`) as they decide
/// it: the first decision for a file is the one the real run would act on (a key the pass decides to fetch is
/// not fetched again by the run's last step). Lock-guarded: the pass decides on the cooperative pool.
final class DryRunPlan: Sendable {
    private let decisions = Mutex<[String: DryRunDecision]>([:])

    init() {}

    /// Notes `decision`, unless its subject has one already.
    func note(_ decision: DryRunDecision) {
        decisions.withLock { if $0[decision.subject] == nil { $0[decision.subject] = decision } }
    }

    /// What previewing the job of a miss of `key` found; `intact` is no decision (the file stays as it is).
    func note(_ key: AssetKey, _ access: PlannedAccess) {
        let keyDetail = (key: "key", value: key.rawValue)
        switch access {
        case .intact:
            return
        case .fetch(let reason):
            note(.init(action: .fetch, subject: key.fileName, details: [keyDetail] + (reason.map { [("reason", $0.rawValue)] } ?? [])))
        case .replace(let reason, let keepingCopy):
            var details = [keyDetail, ("reason", reason.rawValue)]
            if keepingCopy { details.append(("conflict_copy", key.fileName.dropLast(".png".count) + ".conflict-YYYYMMDD-HHMMSS.png")) }
            note(.init(action: .replace, subject: key.fileName, details: details))
        case .adopt:
            note(.init(action: .adopt, subject: key.fileName, details: [keyDetail]))
        case .conflict(let what, let unlessIdentical):
            var details = [keyDetail, ("reason", what)]
            if unlessIdentical { details.append(("unless", "it holds the gallery's exact bytes (then adopted)")) }
            note(.init(action: .conflict, subject: key.fileName, details: details))
        }
    }

    /// An access the real run would refuse or fail without asking the gallery (an answer with no image on record,
    /// a file that cannot be looked at).
    func noteRefused(_ key: AssetKey, _ failure: any Error) {
        note(.init(action: .refuse, subject: key.fileName, details: [("key", key.rawValue), ("reason", String(describing: failure))]))
    }

    /// A feed item refused before any request (a bad URL, a hostile entry).
    func noteRejected(_ rejection: AssetKey.Rejection) {
        note(.init(action: .refuse, subject: rejection.url, details: [("reason", rejection.reason)]))
    }

    /// A stored item whose feed tag changed: fetched again conditionally, replaced only if its bytes changed.
    func noteRefresh(_ key: AssetKey) {
        note(.init(action: .refresh, subject: key.fileName, details: [("key", key.rawValue), ("reason", "the feed's tag changed")]))
    }

    /// What the deletion guard decided for the files of items gone from the feed.
    func note(_ removal: GoneItemRemoval.Plan) {
        switch removal {
        case .remove(let keys):
            for key in keys { note(.init(action: .remove, subject: key.fileName, details: [("key", key.rawValue)])) }
        case .refuse(let keys, let reason, _):
            for key in keys {
                note(.init(action: .keep, subject: key.fileName, details: [
                    ("key", key.rawValue), ("reason", "deletion guard: \(reason); allow it with --max-delete 100"),
                ]))
            }
        }
    }

    /// The plan, in the order a person reads it: by action, then by name.
    func report(assets: Int, notice: String?) -> DryRunReport {
        let all = decisions.withLock { Array($0.values) }.sorted {
            $0.action != $1.action ? $0.action < $1.action : $0.subject < $1.subject
        }
        return DryRunReport(decisions: all, assets: assets, notice: notice)
    }
}

/// What a dry run found: the decisions, and what they add up to.
public struct DryRunReport: Sendable {
    public let decisions: [DryRunDecision]
    /// Distinct assets in the feed.
    public let assets: Int
    /// What a person should know about the index (one a real run would rebuild).
    public let notice: String?

    /// Assets of the feed the run would leave as they are (no decision names them).
    var unchanged: Int {
        assets - decisions.count { $0.details.first?.key == "key" && $0.action != .remove && $0.action != .keep }
    }

    /// Decisions per action.
    public func count(_ action: DryRunDecision.Action) -> Int { decisions.count { $0.action == action } }

    /// The exit status the real run would have as far as can be known without downloading: partial (2) when an
    /// item would be refused or left in conflict, else success (0); a fetch listed may still fail.
    public var exitStatus: ExitStatus {
        decisions.contains { $0.action.leavesAssetMissing } ? .partial : .success
    }

    /// The last line: every count, and the exit status, as `key=value` words.
    public var summary: String {
        let counts = DryRunDecision.Action.allCases.map { "\($0.word)=\(count($0))" }
        return (["dry-run", "assets=\(assets)", "unchanged=\(unchanged)"] + counts + ["exit=\(exitStatus.rawValue)"]).joined(separator: " ")
    }
}
