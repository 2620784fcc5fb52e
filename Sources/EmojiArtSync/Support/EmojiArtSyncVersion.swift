/// The version `--version` prints and the User-Agent carries.
public enum EmojiArtSyncVersion {
    public static let current = "0.1.0"
}
