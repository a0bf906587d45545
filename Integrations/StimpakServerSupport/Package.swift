// swift-tools-version:6.2
import PackageDescription

// What the Hummingbird and Vapor integrations share, nothing of a server framework in it: `StimpakServer`, which
// their libraries depend on, and the examples' services, registrations and test helpers, which only their
// examples, hand-written twins and tests use (an app that adds StimpakHummingbird or StimpakVapor builds none
// of these).
let package = Package(
    name: "StimpakServerSupport",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18)],
    products: [
        .library(name: "StimpakServer", targets: ["StimpakServer"]),
        .library(name: "ServerExampleServices", targets: ["ServerExampleServices"]),
        .library(name: "ServerExampleModule", targets: ["ServerExampleModule"]),
        .library(name: "ServerTestSupport", targets: ["ServerTestSupport"]),
    ],
    dependencies: [
        .package(name: "Stimpak", path: "../.."),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
    ],
    targets: [
        // What the StimpakHummingbird and StimpakVapor libraries share: a request scope's disposal, logged, and
        // the testing helpers' leak report. Its dependencies are theirs already.
        .target(
            name: "StimpakServer",
            dependencies: [
                .product(name: "Stimpak", package: "Stimpak"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The example's services as plain types: the hand-written twins use them without a container.
        .target(name: "ServerExampleServices"),
        // The example's registrations, the framework's request type and path accessor given as parameters.
        .target(
            name: "ServerExampleModule",
            dependencies: ["ServerExampleServices", .product(name: "Stimpak", package: "Stimpak")]),
        // The integration tests' helpers: a log that records, a condition awaited, a client that hangs up, and the
        // checks of the example app's sessions.
        .target(
            name: "ServerTestSupport",
            dependencies: [
                "ServerExampleServices",
                .product(name: "Stimpak", package: "Stimpak"),
                .product(name: "Logging", package: "swift-log"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
