// swift-tools-version: 6.2
import PackageDescription

/// One settings list for every Swift target.
let swiftSettings: [SwiftSetting] = [
    // Strict concurrency checking and data-race safety, enforced as errors.
    .swiftLanguageMode(.v6),
    // `any P` spelled out, so existential costs are visible at the use site.
    .enableUpcomingFeature("ExistentialAny"),
    // A file sees only the members of modules it imports itself.
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "emojiart-sync",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "emojiart-sync", targets: ["emojiart-sync"]),
        .executable(name: "emojiart-gallery", targets: ["emojiart-gallery"]),
        .library(name: "EmojiArtSync", targets: ["EmojiArtSync"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // The HTTP model (request and response heads, header fields) of the package's own small server.
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // Layered settings (flags, environment, config file) for the command line. No traits: it then builds
        // only itself, swift-system and swift-collections' DequeModule (about 50 s of CPU on a clean build).
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: []),
        // File descriptors and errno as Swift types (writes that retry EINTR): already built for
        // swift-configuration, so it costs no build time of its own.
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
    ],
    targets: [
        // C libraries, found through pkg-config; the providers tell SwiftPM which Debian package to suggest.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CPNG",
            pkgConfig: "libpng",
            providers: [.apt(["libpng-dev"])]
        ),
        // OpenSSL's libcrypto, for SHA-256: already on every system that has libcurl4-openssl, so no crypto
        // library is compiled with the package (swift-crypto's BoringSSL doubled the first build's time).
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // SQLite, for the stored-images index: the system library, so nothing is compiled for it.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // The few C functions Swift cannot express: libpng's setjmp/longjmp error path, renameat2(2).
        .target(name: "CShims", dependencies: ["CPNG"]),

        // Named, joinable POSIX threads for blocking work (the HTTP client's loop, the inotify reader, the small
        // server's threads): the package's one caller of pthread_create.
        .target(name: "POSIXThreads", swiftSettings: swiftSettings),

        // A small HTTP/1.1 server on POSIX sockets (a poll(2) event loop and a few handler threads, connections
        // capped, requests timed out) for the bundled gallery and the metrics endpoint. Hummingbird on swift-nio did this before and was about 40 % of the first build.
        .target(
            name: "EmbeddedHTTP",
            dependencies: ["POSIXThreads", .product(name: "HTTPTypes", package: "swift-http-types")],
            swiftSettings: swiftSettings
        ),

        // libpng for Swift: validation (structure and full decode) and encoding. Pure functions, no actors.
        .target(
            name: "EmojiArtPNG",
            dependencies: ["CPNG", "CShims"],
            swiftSettings: swiftSettings
        ),
        // An async HTTP client on one libcurl multi handle, driven by a thread of its own.
        .target(
            name: "CurlHTTP",
            dependencies: ["CCurl", "POSIXThreads"],
            swiftSettings: swiftSettings
        ),
        // The agent: feed, caches, storage, watching, logging. Everything the CLI wires together.
        .target(
            name: "EmojiArtSync",
            dependencies: [
                "CurlHTTP", "EmojiArtPNG", "CShims", "CCrypto", "CSQLite", "POSIXThreads",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                // The opt-in Prometheus endpoint (--metrics-listen): swift-metrics API, its Prometheus backend,
                // served by the package's own small HTTP server.
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                "EmbeddedHTTP",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "emojiart-sync",
            dependencies: [
                "EmojiArtSync",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                "CurlHTTP",
            ],
            swiftSettings: swiftSettings
        ),
        // A Linux stand-in for the book's gallery server, quirks and fault injection included.
        .target(
            name: "EmojiArtGallery",
            dependencies: [
                "EmojiArtPNG",
                "EmbeddedHTTP",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            // Optimised even in debug builds: unoptimised, painting one 360x650 image takes ~150 ms, which
            // makes tests with thousands of assets spend minutes in the test server instead of the agent.
            swiftSettings: swiftSettings + [.unsafeFlags(["-O"], .when(configuration: .debug))]
        ),
        .executableTarget(
            name: "emojiart-gallery",
            dependencies: [
                "EmojiArtGallery",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: swiftSettings
        ),

        // What every test target shares: polling until a condition holds, a temporary directory per test, the test
        // HTTP server for crafted replies, the raw client, process resources.
        .target(
            name: "TestSupport",
            dependencies: ["POSIXThreads"],
            path: "Tests/TestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "POSIXThreadsTests",
            dependencies: ["POSIXThreads", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EmbeddedHTTPTests",
            dependencies: [
                "EmbeddedHTTP", "CurlHTTP", "TestSupport", .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EmojiArtPNGTests",
            dependencies: ["EmojiArtPNG"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CurlHTTPTests",
            dependencies: ["CurlHTTP", "EmojiArtGallery", "POSIXThreads", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EmojiArtGalleryTests",
            dependencies: ["EmojiArtGallery", "EmojiArtPNG", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EmojiArtSyncTests",
            dependencies: [
                "EmojiArtSync", "EmojiArtGallery", "EmojiArtPNG", "emojiart-sync", "emojiart-gallery", "EmbeddedHTTP",
                "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
