/// What the job of a miss would do (`AccessPipeline.preview`), decided by the rules its real job follows, with
/// nothing fetched or written: a dry run's view of one asset.
enum PlannedAccess: Sendable, Equatable {
    /// The file holds the recorded bytes after all (read and hashed): a disk hit, nothing to do but record its
    /// new fingerprint.
    case intact
    /// Fetched: not stored (`nil`), or the agent's file is missing.
    case fetch(DamageReason?)
    /// The agent's file is damaged: fetched again and put in its place. `keepingConflictCopy`: the file there now
    /// is not the one the agent wrote (a file of someone's put over it), so it is moved aside as
    /// `NAME.conflict-…png` rather than deleted (`OwnershipGuard.replace`).
    case replace(DamageReason, keepingConflictCopy: Bool)
    /// A file with exactly the agent's bytes and one name sits at the path: taken into the agent's care as it is.
    case adopt
    /// The path holds what the agent may not write (a link, a FIFO, a file it did not write): left alone, and the
    /// asset not had. `unlessIdentical`: a regular file a download would be compared with, adopted instead if it
    /// holds exactly the gallery's bytes, which only the download can tell.
    case conflict(String, unlessIdentical: Bool)
}
