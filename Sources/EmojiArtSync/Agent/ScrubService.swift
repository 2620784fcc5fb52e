/// The background scrub (`--scrub-interval`): a step a minute (the first a minute after start), nothing in
/// between; what a step finds damaged is repaired at once (`MirrorKeeper.scrubStep`).
struct ScrubService: AgentService {
    let name = "scrub"
    let keeper: MirrorKeeper

    func loop() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: Scrubber.stepPeriod)
            if Task.isCancelled { return }
            await keeper.scrubStep()
        }
    }
}
