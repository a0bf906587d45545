// swift-tools-version:6.0
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
        .testTarget(name: "StimpakTests", dependencies: ["Stimpak"]),
    ],
    swiftLanguageModes: [.v6]
)
