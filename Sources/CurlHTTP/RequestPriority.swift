/// Which queue a request waits in when every transfer slot is taken: an `urgent` request starts before any
/// `normal` one that is still waiting (those started are never interrupted). The agent marks a repair of a
/// file a person damaged `urgent`, so it does not wait behind the hundreds of transfers a full pass queues.
public enum RequestPriority: Sendable, Equatable {
    case normal
    case urgent
}
