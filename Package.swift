// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "Stimpak",
    platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6)],
    products: [
        .library(name: "Stimpak", targets: ["Stimpak"]),
        .executable(name: "stimpak-server-example", targets: ["StimpakServerExample"]),
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
        .testTarget(name: "StimpakTests", dependencies: ["Stimpak", "StimpakMainActorFixture"]),
    ],
    swiftLanguageModes: [.v6]
)
