import CPNG

/// The libpng this process runs with (the shared library's, which can be newer than the headers built against).
public enum LibPNGVersion {
    /// `1.6.48`. The corresponding C function is `png_get_libpng_ver`.
    public static var runtime: String { String(cString: png_get_libpng_ver(nil)) }
}
