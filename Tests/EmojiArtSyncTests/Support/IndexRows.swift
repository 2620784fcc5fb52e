@testable import EmojiArtSync

/// The names of the files the index of `dir` records: what a test reads once the agent has stopped, to check
/// the index caught up with DIR.
@SyncActor
func indexedFileNames(in dir: String) throws -> Set<String> {
    let (index, _) = try AssetIndex.open(directory: SyncDirectory(dir))
    return Set(try index.allEntries().map(\.name))
}
