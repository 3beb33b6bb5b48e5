// swift-tools-version:6.0
import PackageDescription

// Two apps written against Tessera the way an app outside this repository would be: through the
// `Tessera` product (and `TesseraTesting` for the tests), with the package found by path.
//   swift run --package-path Examples FirstApp
//   swift run --package-path Examples PhotoFeed
//   swift test --package-path Examples
let package = Package(
    name: "Examples",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Tessera", path: ".."),
    ],
    targets: [
        // The README's "Your first app", verbatim (`check-readme.sh` keeps the two the same).
        .executableTarget(
            name: "FirstApp",
            dependencies: [.product(name: "Tessera", package: "Tessera")],
            path: "FirstApp"
        ),
        // A photo feed in the style of Texture's ASDKgram; its photos ship as this target's resources.
        .executableTarget(
            name: "PhotoFeed",
            dependencies: [.product(name: "Tessera", package: "Tessera")],
            path: "PhotoFeed",
            resources: [.copy("Photos")]
        ),
        // The tour of everyday tasks (docs/tour.md shows these files whole; `check-readme.sh` keeps
        // the page and the files the same).
        .executableTarget(
            name: "Tour",
            dependencies: [.product(name: "Tessera", package: "Tessera")],
            path: "Tour"
        ),
        .testTarget(
            name: "PhotoFeedTests",
            dependencies: [
                "PhotoFeed",
                .product(name: "Tessera", package: "Tessera"),
                .product(name: "TesseraTesting", package: "Tessera"),
            ],
            path: "PhotoFeedTests",
            exclude: ["__Snapshots__"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
