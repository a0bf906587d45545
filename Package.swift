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
        .target(name: "Stimpak"),
        .executableTarget(name: "StimpakServerExample", dependencies: ["Stimpak"]),
        .testTarget(name: "StimpakTests", dependencies: ["Stimpak"]),
    ],
    swiftLanguageModes: [.v6]
)
