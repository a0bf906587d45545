// swift-tools-version: 6.1
// Stimpak's benchmarks: a package of its own so that the library itself stays dependency-free.
//
//   swift package benchmark                      # ordo-one/benchmark suite: wall clock percentiles, mallocs
//   swift run -c release StimpakComparison       # hand-written vs Swinject vs Stimpak, markdown table
//   swift run -c release StimpakComparison --quick   # tiny iteration counts (CI: keeps it from rotting)
import PackageDescription

let package = Package(
    name: "StimpakBenchmarks",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [
        // `name:` so that the product reference below doesn't depend on the checkout folder's name.
        .package(name: "Stimpak", path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/Swinject/Swinject", exact: "2.10.0"),
    ],
    targets: [
        // 1,000 generated types for the large-registry scenarios (Scripts/generate-fillers.sh).
        .target(name: "StimpakFixtures", path: "Sources/StimpakFixtures"),
        // The lean sink of the comparison (an opaque C call that retains nothing).
        .target(name: "CBenchmarkSink", path: "Sources/CBenchmarkSink"),
        .executableTarget(
            name: "StimpakComparison",
            dependencies: [
                .product(name: "Stimpak", package: "Stimpak"),
                .product(name: "Swinject", package: "Swinject"),
                "StimpakFixtures",
                "CBenchmarkSink",
            ],
            path: "Sources/StimpakComparison"
        ),
        .executableTarget(
            name: "StimpakBenchmarks",
            dependencies: [
                .product(name: "Stimpak", package: "Stimpak"),
                .product(name: "Benchmark", package: "benchmark"),
                "StimpakFixtures",
            ],
            path: "Benchmarks/StimpakBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
