// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "Stimpak",
    platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6)],
    products: [
        .library(name: "Stimpak", targets: ["Stimpak"]),
        // Definition files (Dose's plist, JSON): Foundation, so a product of its own, outside the core.
        .library(name: "StimpakConfiguration", targets: ["StimpakConfiguration"]),
        .executable(name: "stimpak-server-example", targets: ["StimpakServerExample"]),
        .executable(name: "stimpak-config-example", targets: ["StimpakConfigurationExample"]),
    ],
    targets: [
        // The atomics of the lock-free resolve path (see ARCHITECTURE.md): C, so that no package is needed.
        .target(name: "CStimpakAtomics"),
        .target(name: "Stimpak", dependencies: ["CStimpakAtomics"]),
        .executableTarget(name: "StimpakServerExample", dependencies: ["Stimpak"]),
        // The README's main-actor snippets, built as a new app target is since Swift 6.2: the build proves them.
        .target(
            name: "StimpakMainActorFixture", dependencies: ["Stimpak"],
            swiftSettings: [.defaultIsolation(MainActor.self)]),
        .target(name: "StimpakConfiguration", dependencies: ["Stimpak"]),
        // Every Swift snippet of the README and the DocC articles, verbatim (.ci/check-doc-snippets proves it):
        // building this target compiles the documentation's code.
        .target(name: "StimpakDocSnippets", dependencies: ["Stimpak", "StimpakConfiguration"]),
        .executableTarget(name: "StimpakConfigurationExample", dependencies: ["StimpakConfiguration"]),
        // What several test targets share: the lock around `Container.default`, Dose's sample files.
        .target(name: "StimpakTestSupport", dependencies: ["Stimpak"], path: "Tests/TestSupport"),
        .testTarget(name: "StimpakTests", dependencies: ["Stimpak", "StimpakMainActorFixture", "StimpakTestSupport"]),
        .testTarget(name: "StimpakConfigurationTests", dependencies: ["StimpakConfiguration", "StimpakTestSupport"]),
        // Each seed system's README and tests, ported through its migration table.
        .testTarget(name: "SeedConformanceTests", dependencies: ["Stimpak", "StimpakConfiguration", "StimpakTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
