import FoundationEssentials
import Synchronization

/// What the gallery's validators are made from: a tag for this server's catalog, a tag for the
/// fault plan, and the second the served content last changed.
///
/// The feed's `ETag` is weak (`W/"f-..."`): the feed is shuffled afresh for every request, so its
/// bytes differ while its meaning does not. It covers the catalog (names, urls and the checksums
/// drawn at start, so a restart changes it) and every part of the fault plan except the latency
/// (empty feed, generation, image faults, extra urls, dropped items), so any change in what the
/// gallery serves changes it. While a `changing` fault is in force the content changes on every
/// request, so every feed and every changing image gets a tag of its own and no `Last-Modified`:
/// no conditional request is ever answered 304 then.
///
/// `Last-Modified` is the server's start, moved to the current second whenever the plan changes,
/// and always at least one second later than before, so two changes within one second still give
/// two different dates (a date may then run a second ahead of the clock; `If-None-Match` is
/// exact and takes precedence anyway).
final class GalleryRevision: Sendable {
    private struct State {
        var faults: GalleryFaults
        var planTag: String
        var changedAt: Int
        var nonce = 0
    }

    /// The digest of the catalog's urls, names, prices and checksums.
    let catalogTag: String
    private let state: Mutex<State>

    init(catalog: GalleryCatalog, faults: GalleryFaults) {
        var tag = ContentTag()
        for item in catalog.items {
            tag.add(item.url)
            tag.add(item.name)
            tag.add(String(item.price))
            tag.add(item.checksum)
        }
        catalogTag = tag.hex
        state = Mutex(State(
            faults: faults, planTag: Self.tag(of: faults), changedAt: HTTPDate.now()))
    }

    /// Records a new fault plan; a change in anything but the latency is a content change.
    func planChanged(to faults: GalleryFaults) {
        let tag = Self.tag(of: faults)
        let now = HTTPDate.now()
        state.withLock { state in
            state.faults = faults
            guard state.planTag != tag else { return }
            state.planTag = tag
            state.changedAt = max(now, state.changedAt + 1)
        }
    }

    /// The validators of the feed served under `faults` (the snapshot the response is made from;
    /// should the plan have changed meanwhile, the tag is computed from the snapshot, never paired
    /// with another plan's content).
    func feedValidators(for faults: GalleryFaults) -> ResourceValidators {
        let current = state.withLock { $0.faults == faults }
        let planTag = current ? nil : Self.tag(of: faults)
        return state.withLock { state in
            var tag = ContentTag()
            tag.add(catalogTag)
            tag.add(planTag ?? state.planTag)
            if Self.hasChanging(faults) {
                state.nonce += 1
                tag.add(String(state.nonce))
                return ResourceValidators(etag: "W/\"f-\(tag.hex)\"", lastModified: nil)
            }
            return ResourceValidators(etag: "W/\"f-\(tag.hex)\"", lastModified: state.changedAt)
        }
    }

    /// The validators of a body that is a pure function of the plan (an image, an error item).
    func validators(of body: [UInt8]) -> ResourceValidators {
        ResourceValidators(etag: "\"i-\(ContentTag.of(body))\"", lastModified: state.withLock { $0.changedAt })
    }

    /// The validators of a body that differs on every request (the `changing` fault).
    static func unique(_ body: [UInt8]) -> ResourceValidators {
        ResourceValidators(etag: "\"c-\(ContentTag.of(body))\"", lastModified: nil)
    }

    /// The plan without its latency, canonically encoded and digested.
    private static func tag(of faults: GalleryFaults) -> String {
        var content = faults
        content.latencyMilliseconds = 0
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var tag = ContentTag()
        tag.add((try? encoder.encode(content)).map { Array($0) } ?? Array(String(describing: content).utf8))
        return tag.hex
    }

    private static func hasChanging(_ faults: GalleryFaults) -> Bool {
        faults.allImages == .changing || faults.imageFaults.values.contains(.changing)
    }
}
