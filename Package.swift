// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Tessera",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Compositor", targets: ["Compositor"]),
        .library(name: "NodeRuntime", targets: ["NodeRuntime"]),
        // What an app depends on: the runtime, the compositor and the application entry point.
        .library(name: "Tessera", targets: ["Tessera"]),
        // Offscreen render-and-compare for an app's tests (`assertSnapshot`).
        .library(name: "TesseraTesting", targets: ["TesseraTesting"]),
        .executable(name: "gallery", targets: ["gallery"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        // `swift package generate-documentation` (`make docs`): the DocC catalog in Sources/Tessera.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // SDL2, SDL2_ttf and SDL2_image, seen through one shim header. `Compositor` (its SDL
        // backend and `Bitmap+SDL`) and `NodeRuntime`'s text renderer (SDL_ttf) import it, always
        // with `internal import`, so no SDL type appears in a public signature.
        // No `pkgConfig`: `sdl2`'s flags are `-I/usr/include/SDL2 -D_REENTRANT`, and SwiftPM refuses
        // `-D_REENTRANT` with a warning on every build. Neither flag is needed: the shim includes the
        // headers as `<SDL2/SDL.h>` from the default include path, SDL's headers include one another
        // with quotes (found beside the includer), `_REENTRANT` means nothing to glibc, and the
        // module map links the three libraries itself.
        .systemLibrary(
            name: "CSDL",
            providers: [.apt(["libsdl2-dev", "libsdl2-ttf-dev", "libsdl2-image-dev"])]
        ),
        // The image codecs NodeRuntime decodes with at display size, each behind a small shim header
        // whose wrappers catch the library's error jumps before they reach Swift.
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        // Also libwebpdemux (first frames and WebPAnimDecoder) and, for the tests that make animated
        // files, libwebpmux (WebPAnimEncoder): both come with libwebp-dev.
        .systemLibrary(name: "CWebP", pkgConfig: "libwebp", providers: [.apt(["libwebp-dev"])]),
        .systemLibrary(name: "CGIF", pkgConfig: "libgif", providers: [.apt(["libgif-dev"])]),
        // LittleCMS, which converts the colours an image's profile or colour chunks describe to sRGB.
        .systemLibrary(name: "CLCMS", pkgConfig: "lcms2", providers: [.apt(["liblcms2-dev"])]),
        // ICU for line breaking, grapheme clusters and bidi (libicu-dev comes with HarfBuzz).
        .systemLibrary(name: "CICU", pkgConfig: "icu-uc", providers: [.apt(["libicu-dev"])]),
        // fontconfig, for the fonts that have the characters a text's own font lacks.
        .systemLibrary(name: "CFontconfig", pkgConfig: "fontconfig", providers: [.apt(["libfontconfig-dev"])]),
        // HarfBuzz, which SDL_ttf shapes with, called directly for where a shaped line's clusters lie
        // (libharfbuzz-dev comes with libsdl2-ttf-dev). No `pkgConfig`: the shim includes
        // <harfbuzz/hb.h> from the default include path and the module map links the library, as CSDL does.
        .systemLibrary(name: "CHarfBuzz", providers: [.apt(["libharfbuzz-dev"])]),
        // libdbus, which the AT-SPI bridge speaks to screen readers with, through its iterator API
        // (the shim restates the type codes Swift cannot import).
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        // libcurl, which fetches images by URL (`CurlImageFetcher`): Debian's, built with OpenSSL,
        // nghttp2 (HTTP/2), zlib, brotli and zstd. Its headers only (no pkg-config, whose link flags
        // would link it): `CCurlLoader` loads the library at the first fetch, so an app that fetches
        // nothing maps none of it, and gives its variadic calls typed wrappers.
        .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "CCurlLoader", dependencies: ["CCurl"]),
        // LoopbackServer's system libraries: OpenSSL for TLS and its test certificates, libnghttp2's
        // server session for HTTP/2 (frames and header compression are nghttp2's), zlib for gzip bodies.
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CNGHTTP2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // An HTTP/1.1, HTTPS and HTTP/2 server on 127.0.0.1 (a forward proxy too), for the gallery's
        // `--serve-assets` and the tests' servers; it sheds clients slower than a minimum rate.
        .target(name: "LoopbackServer", dependencies: ["COpenSSL", "CNGHTTP2", "CZlib"],
                swiftSettings: [.enableUpcomingFeature("InternalImportsByDefault")]),
        // The libdbus wrapper (connections, messages, values) that the AT-SPI bridge and the settings
        // portal reader share; `package` access, no public API.
        .target(name: "TesseraDBus", dependencies: ["CDBus"],
                swiftSettings: [.enableUpcomingFeature("InternalImportsByDefault")]),
        // SplitMix64, the one seeded generator: the image fuzzer and the seeded tests replay from a seed.
        .target(name: "TesseraRandom"),
        // The C side of ICU: plain-typed wrappers, so no ICU type reaches Swift (see Sources/CICU).
        .target(name: "TesseraICU", dependencies: ["CICU"]),
        // Process services in C (the main thread, a turn of the main dispatch queue), and the bundled
        // faces (DejaVu Sans, Sans Bold and Sans Mono) as this target's resources: SwiftPM copies them
        // beside every executable as `Tessera_CTessera.resources`. A C target, so no `Bundle.module`
        // accessor is generated (it would link Foundation into every app, and it traps when the bundle
        // is missing); `BundledFonts` finds the folder itself.
        .target(name: "CTessera", resources: [.copy("Fonts")]),
        .target(
            name: "Compositor",
            dependencies: ["CSDL", "CTessera", .product(name: "OrderedCollections", package: "swift-collections")],
            swiftSettings: [.enableUpcomingFeature("InternalImportsByDefault")]
        ),
        .target(
            name: "NodeRuntime",
            dependencies: ["Compositor", "CSDL", "CJPEG", "CPNG", "CWebP", "CGIF", "CLCMS", "TesseraICU", "CFontconfig",
                           "CHarfBuzz", "CCurl", "CCurlLoader", "CTessera", .product(name: "Logging", package: "swift-log")],
            swiftSettings: [.enableUpcomingFeature("InternalImportsByDefault")]
        ),
        // Screen readers on Linux: the accessibility tree served over D-Bus as AT-SPI2, on a thread of
        // its own (`AtspiBridge`), fed by the UI thread (`AtspiPublisher`).
        .target(
            name: "AccessibilityBridge",
            dependencies: ["Compositor", "NodeRuntime", "CDBus", "TesseraDBus", .product(name: "Logging", package: "swift-log")],
            swiftSettings: [.enableUpcomingFeature("InternalImportsByDefault")]
        ),
        // The desktop's appearance (dark, contrast, accent, text scale, reduced motion) read from the
        // XDG settings portal on a thread of its own (`SettingsPortal`) and handed to the UI thread.
        .target(
            name: "TesseraPortal",
            dependencies: ["Compositor", "NodeRuntime", "CDBus", "TesseraDBus", "CTessera", .product(name: "Logging", package: "swift-log")],
            swiftSettings: [.enableUpcomingFeature("InternalImportsByDefault")]
        ),
        // The application entry point (`Application`, `App`), re-exporting NodeRuntime and Compositor.
        .target(name: "Tessera", dependencies: ["Compositor", "NodeRuntime", "AccessibilityBridge", "TesseraPortal", "CSDL", "CTessera"]),
        .target(name: "TesseraTesting", dependencies: ["Tessera", "Compositor", "NodeRuntime"],
                swiftSettings: [.enableUpcomingFeature("InternalImportsByDefault")]),
        .executableTarget(
            name: "gallery",
            dependencies: [
                "Tessera",
                "TesseraRandom",
                "LoopbackServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            resources: []
        ),
        // The image decoders' seeded mutation fuzzer (`make fuzz`).
        .executableTarget(
            name: "image-fuzz",
            dependencies: ["Compositor", "NodeRuntime", "TesseraRandom"]
        ),
        // Shared by the test targets: golden-image comparison, offscreen rendering of node trees
        // through the software renderer, encoded test images, exit-test message checks.
        .target(
            name: "TestSupport",
            dependencies: ["Compositor", "NodeRuntime", "TesseraTesting", "CJPEG", "CGIF", "CWebP", "LoopbackServer"],
            path: "Tests/TestSupport",
            swiftSettings: [.enableUpcomingFeature("InternalImportsByDefault")]
        ),
        .testTarget(
            name: "CompositorTests",
            dependencies: ["Compositor", "TestSupport", "TesseraRandom"],
            exclude: ["Goldens"]
        ),
        // The C allocator's in-use byte count, for tests that bound what a cache keeps alive.
        .systemLibrary(name: "CAllocationCount", path: "Tests/CAllocationCount"),
        .testTarget(
            name: "NodeRuntimeTests",
            dependencies: ["NodeRuntime", "Compositor", "TestSupport", "TesseraRandom", "CWebP", "CLCMS", "CAllocationCount", "LoopbackServer"],
            exclude: ["Goldens", "FuzzRegressions", "ImageFixtures"]
        ),
        .testTarget(
            name: "TesseraTests",
            dependencies: ["Tessera", "TesseraTesting", "NodeRuntime", "Compositor", "TestSupport", "AccessibilityBridge",
                           "TesseraRandom", "TesseraDBus", "TesseraPortal", "CTessera"],
            exclude: ["__Snapshots__", "Accessibility/atspi_client.py"]
        ),
        .testTarget(name: "LoopbackServerTests", dependencies: ["LoopbackServer", "TestSupport"]),
        .testTarget(
            name: "GalleryTests",
            dependencies: ["gallery", "Tessera", "NodeRuntime", "Compositor", "TestSupport", "LoopbackServer"],
            // The scripted Wayland input method's C source and protocols, compiled by its test.
            exclude: ["Goldens", "App/WaylandInputMethod"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
