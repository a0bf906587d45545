// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "StimpakVapor",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18)],
    products: [
        .library(name: "StimpakVapor", targets: ["StimpakVapor"]),
        .library(name: "StimpakVaporTesting", targets: ["StimpakVaporTesting"]),
        .executable(name: "stimpak-vapor-example", targets: ["StimpakVaporExample"]),
        .executable(name: "vapor-hand-written-example", targets: ["VaporHandWrittenExample"]),
    ],
    dependencies: [
        .package(name: "Stimpak", path: "../.."),
        .package(name: "StimpakServerSupport", path: "../StimpakServerSupport"),
        .package(url: "https://github.com/vapor/vapor", exact: "4.122.3"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
    ],
    targets: [
        .target(
            name: "StimpakVapor",
            dependencies: [
                .product(name: "Stimpak", package: "Stimpak"),
                .product(name: "StimpakServer", package: "StimpakServerSupport"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // Helpers for VaporTesting tests: an override scope of fakes, validation, the no-leak assertions.
        .target(
            name: "StimpakVaporTesting",
            dependencies: [
                "StimpakVapor",
                .product(name: "Stimpak", package: "Stimpak"),
                .product(name: "StimpakServer", package: "StimpakServerSupport"),
                .product(name: "Vapor", package: "vapor"),
            ]),
        // The example server: its container and routes are in a library target, so that the tests serve the
        // same app.
        .target(
            name: "StimpakVaporExampleApp",
            dependencies: [
                "StimpakVapor",
                .product(name: "ServerExampleModule", package: "StimpakServerSupport"),
                .product(name: "ServerExampleServices", package: "StimpakServerSupport"),
                .product(name: "Stimpak", package: "Stimpak"),
                .product(name: "Vapor", package: "vapor"),
            ]),
        .executableTarget(name: "StimpakVaporExample", dependencies: ["StimpakVaporExampleApp"]),
        // The same handlers without a container: the load script's baseline.
        .executableTarget(
            name: "VaporHandWrittenExample",
            dependencies: [
                .product(name: "Vapor", package: "vapor"),
                .product(name: "ServerExampleServices", package: "StimpakServerSupport"),
            ]),
        .testTarget(
            name: "StimpakVaporTests",
            dependencies: [
                "StimpakVapor",
                "StimpakVaporTesting",
                "StimpakVaporExampleApp",
                .product(name: "ServerExampleModule", package: "StimpakServerSupport"),
                .product(name: "ServerExampleServices", package: "StimpakServerSupport"),
                .product(name: "ServerTestSupport", package: "StimpakServerSupport"),
                .product(name: "VaporTesting", package: "vapor"),
                .product(name: "Logging", package: "swift-log"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
