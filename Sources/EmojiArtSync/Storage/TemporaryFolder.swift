/// The state folder's `tmp/`, where each body is written before it is renamed into DIR.
///
/// Files in it are made, flushed and renamed by their path, not relative to a descriptor of the folder opened at
/// start (tried, for the path walks it saves): a descriptor keeps reaching the mount it was opened on, so once
/// DIR had been made read-only by a bind mount over it, the agent went on writing through the old, writable mount
/// (`ReadOnlyDirectoryTests`). By path, the kernel sees DIR as it is now, and refuses.
final class TemporaryFolder: Sendable {
    let path: String

    init(path: String) {
        self.path = path
    }
}
