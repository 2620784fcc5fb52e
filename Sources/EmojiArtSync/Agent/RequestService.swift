import Logging

/// Hears the requests of commands (`RequestInbox`, its own inotify watch on `DIR/.emojiart-sync/requests/`):
/// `emojiart-sync scrub` asks for a scrub now. One left before the agent started is taken at once. Ends, logging
/// why, when the inbox cannot be made or watched: the agent goes on without it.
struct RequestService: AgentService {
    let name = "requests"
    let directory: SyncDirectory
    let keeper: MirrorKeeper
    let logger: Logger

    func loop() async {
        let watcher: DirectoryWatcher
        do {
            try RequestInbox.prepare(in: directory)
            watcher = try DirectoryWatcher(path: RequestInbox.path(in: directory))
        } catch {
            logger.warning("cannot hear the requests of commands (emojiart-sync scrub)", metadata: [
                "event": "watch", "result": "failed", "path": .string(RequestInbox.path(in: directory)),
                "error": .string(String(describing: error)),
            ])
            return
        }
        await withTaskCancellationHandler {
            await answerRequests()
            for await _ in watcher.events {
                if Task.isCancelled { break }
                await answerRequests()
            }
        } onCancel: {
            watcher.requestStop()  // never block in a cancellation handler
        }
        watcher.stop()
    }

    private func answerRequests() async {
        for request in RequestInbox.take(in: directory) {
            switch request {
            case .scrub:
                logger.info("scrubbing every file now, as asked", metadata: ["event": "scrub", "result": "requested"])
                await keeper.scrubNow()
            }
        }
    }
}
