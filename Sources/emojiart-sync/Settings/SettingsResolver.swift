import Configuration
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Resolves every `RunSetting` through swift-configuration, first match wins: the flags given on the command
/// line, then the environment (`EMOJIART_SYNC_*`), then the config file, then the default. Remembers which
/// of these answered each setting, for `emojiart-sync config`.
struct SettingsResolver {
    /// Where a setting's value came from.
    enum Source: String, Sendable {
        case flag, environment, file, `default`
    }

    /// A setting's effective value (nil when it has none) and where it came from, said the way a person
    /// would look for it: `--interval`, `EMOJIART_SYNC_INTERVAL`, the file's path, or `default`.
    struct Resolved: Sendable, Equatable {
        var value: String?
        var source: Source
        var origin: String
    }

    let configFile: String
    let configFileExists: Bool
    private let environment: [String: String]
    private let reader: ConfigReader
    private let recorder: ProvenanceRecorder
    private let sources: [String: Source]

    /// `$XDG_CONFIG_HOME/emojiart-sync/config`, or `~/.config/emojiart-sync/config` when that is unset.
    static func configFilePath(environment: [String: String]) -> String {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            return xdg + "/emojiart-sync/config"
        }
        let home = environment["HOME"] ?? PathExpansion.homeDirectory(ofUser: nil) ?? "/"
        return home + "/.config/emojiart-sync/config"
    }

    /// Why the config file at `path` cannot be read (a folder on the way that may not be searched, a loop of
    /// links, a folder in its place), in words; nil when it can be, or is missing (then it is empty).
    static func whyUnreadable(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            return code == ENOENT || code == ENOTDIR ? nil : String(cString: strerror(code))
        }
        defer { close(descriptor) }
        var info = stat()
        if fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { return "it is a folder" }
        return nil
    }

    /// Reads the config file (a missing one is empty). Throws when it is malformed, naming path and line.
    init(flags: [RunSetting: String], environment: [String: String] = ProcessInfo.processInfo.environment) async throws {
        self.environment = environment
        configFile = Self.configFilePath(environment: environment)
        configFileExists = FileManager.default.fileExists(atPath: configFile)
        if let problem = Self.whyUnreadable(configFile) {
            throw SettingsError("cannot read the config file \(configFile): \(problem)")
        }
        let flagValues = Dictionary(uniqueKeysWithValues: flags.map { setting, value in
            (AbsoluteConfigKey([setting.rawValue]), ConfigValue(.string(value), isSecret: false))
        })
        let flagProvider = InMemoryProvider(name: "flags", values: flagValues)
        let environmentProvider = EnvironmentVariablesProvider(environmentVariables: environment)
            .prefixKeys(with: ConfigKey(["emojiart-sync"]))
        let fileProvider: FileProvider<SettingsFileSnapshot>
        do {
            fileProvider = try await FileProvider<SettingsFileSnapshot>(config: ConfigReader(provider: InMemoryProvider(values: [
                "filePath": ConfigValue(.string(configFile), isSecret: false),
                "allowMissing": true,
            ])))
        } catch {
            throw SettingsError("\(configFile): \(error)")
        }
        sources = [
            flagProvider.providerName: .flag,
            environmentProvider.providerName: .environment,
            fileProvider.providerName: .file,
        ]
        recorder = ProvenanceRecorder()
        reader = ConfigReader(providers: [flagProvider, environmentProvider, fileProvider], accessReporter: recorder)
    }

    /// The effective value of `setting` and its source. A path setting is expanded as a shell would
    /// (`PathExpansion`): fully when it came from the environment or the file, which met no shell; only its
    /// leading `~` when it came from a flag, whose `$` the shell has already seen (`--dir=~/emoji` keeps
    /// its `~` in every shell). Throws when a path names a variable or user that does not exist.
    func resolve(_ setting: RunSetting) throws(SettingsError) -> Resolved {
        let key = ConfigKey([setting.rawValue])
        guard let value = reader.string(forKey: key) else {
            return Resolved(value: setting.defaultValue, source: .default, origin: "default")
        }
        let answered = recorder.provider(of: AbsoluteConfigKey(key))
        let resolved: Resolved
        switch answered.flatMap({ sources[$0] }) ?? .default {
        case .flag: resolved = Resolved(value: value, source: .flag, origin: setting.option)
        case .environment: resolved = Resolved(value: value, source: .environment, origin: setting.environmentVariable)
        case .file: resolved = Resolved(value: value, source: .file, origin: configFile)
        case .default: resolved = Resolved(value: value, source: .default, origin: "default")
        }
        guard setting.isPath else { return resolved }
        do {
            var expanded = resolved
            expanded.value = resolved.source == .flag
                ? try PathExpansion.expandTilde(value, environment: environment)
                : try PathExpansion.expand(value, environment: environment)
            return expanded
        } catch {
            throw SettingsError("\(setting.option): \(error) (\(spelled(resolved.source, setting, value)))")
        }
    }

    /// Where a value was given, as a person would find it: `--interval 5`, `EMOJIART_SYNC_INTERVAL=0`,
    /// `interval = 5 in FILE`, or `default`. Error messages end with it.
    func spelled(_ source: Source, _ setting: RunSetting, _ value: String?) -> String {
        switch source {
        case .default: "default"
        case .flag: "\(setting.option) \(value ?? "")"
        case .environment: "\(setting.environmentVariable)=\(value ?? "")"
        case .file: "\(setting.rawValue) = \(value ?? "") in \(configFile)"
        }
    }

    /// Every setting, in the table's order.
    func resolveAll() throws(SettingsError) -> [(RunSetting, Resolved)] {
        try RunSetting.allCases.map { setting throws(SettingsError) in (setting, try resolve(setting)) }
    }
}

/// Settings that cannot be used: a malformed config file, or a value out of range (with where it came from).
struct SettingsError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Records, for each key read, the name of the provider that supplied its value: swift-configuration reports
/// every provider's answer to an access reporter, in the order they were asked.
private final class ProvenanceRecorder: AccessReporter {
    private let answered = Mutex<[AbsoluteConfigKey: String]>([:])

    func report(_ event: AccessEvent) {
        let provider = event.providerResults.first { result in
            (try? result.result.get().value) != nil
        }?.providerName
        answered.withLock { $0[event.metadata.key] = provider }
    }

    func provider(of key: AbsoluteConfigKey) -> String? {
        answered.withLock { $0[key] }
    }
}
