// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "StimpakHummingbird",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18)],
    products: [
        .library(name: "StimpakHummingbird", targets: ["StimpakHummingbird"]),
        .library(name: "StimpakHummingbirdTesting", targets: ["StimpakHummingbirdTesting"]),
        .executable(name: "stimpak-hummingbird-example", targets: ["StimpakHummingbirdExample"]),
        .executable(name: "hand-written-example", targets: ["HandWrittenExample"]),
    ],
    dependencies: [
        .package(name: "Stimpak", path: "../.."),
        .package(name: "StimpakServerSupport", path: "../StimpakServerSupport"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
    ],
    targets: [
        .target(
            name: "StimpakHummingbird",
            dependencies: [
                .product(name: "Stimpak", package: "Stimpak"),
                .product(name: "StimpakServer", package: "StimpakServerSupport"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // Helpers for `.router` tests: an override scope of fakes, validation, the no-leak assertions.
        .target(
            name: "StimpakHummingbirdTesting",
            dependencies: [
                "StimpakHummingbird",
                .product(name: "Stimpak", package: "Stimpak"),
                .product(name: "StimpakServer", package: "StimpakServerSupport"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]),
        // The example server: its routes are in a library target, so that the tests serve the same app.
        .target(
            name: "StimpakHummingbirdExampleApp",
            dependencies: [
                "StimpakHummingbird",
                .product(name: "ServerExampleModule", package: "StimpakServerSupport"),
                .product(name: "ServerExampleServices", package: "StimpakServerSupport"),
                .product(name: "Stimpak", package: "Stimpak"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]),
        .executableTarget(name: "StimpakHummingbirdExample", dependencies: ["StimpakHummingbirdExampleApp"]),
        // The same handlers without a container: the load script's baseline.
        .executableTarget(
            name: "HandWrittenExample",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServerExampleServices", package: "StimpakServerSupport"),
            ]),
        .testTarget(
            name: "StimpakHummingbirdTests",
            dependencies: [
                "StimpakHummingbird",
                "StimpakHummingbirdTesting",
                "StimpakHummingbirdExampleApp",
                .product(name: "ServerExampleModule", package: "StimpakServerSupport"),
                .product(name: "ServerExampleServices", package: "StimpakServerSupport"),
                .product(name: "ServerTestSupport", package: "StimpakServerSupport"),
                .product(name: "StimpakServer", package: "StimpakServerSupport"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
