// Runs the scenarios of issue 3 three ways in one process: written by hand (the floor), Swinject,
// Stimpak; prints a markdown table of ns/op with each container's ratio to the floor, then the contention
// table (Contention.swift): the latency of dispose, unregister and register while other threads resolve.
//
//   swift run -c release StimpakComparison           # full run (about a minute and a half)
//   swift run -c release StimpakComparison --quick   # tiny iteration counts, for CI: checks it still runs
//   swift run -c release StimpakComparison --contention     # the contention table alone (about 15 s; with
//                                                           # --quick, a few seconds)
//   swift run -c release StimpakComparison --instructions   # instructions per operation, under callgrind
//   swift run -c release StimpakComparison --memory         # bytes per open scope and per cached instance
let arguments = CommandLine.arguments.dropFirst()
if arguments.contains("--help") || arguments.contains("-h") {
    print("usage: StimpakComparison [--quick] [--contention] | --instructions | --memory | --scenario NAME --iterations N")
} else if let index = arguments.firstIndex(of: "--scenario") {
    let name = arguments[arguments.index(after: index)]
    let iterations = arguments.firstIndex(of: "--iterations").map { Int(arguments[arguments.index(after: $0)]) ?? 1 } ?? 1
    runInstructionScenario(name, iterations: iterations)
} else if arguments.contains("--instructions") {
    runInstructionComparison()
} else if arguments.contains("--memory") {
    runMemoryMeasurement()
} else if arguments.contains("--contention") {
    runContentionSection(settings: arguments.contains("--quick") ? .quick : .full)
} else {
    let isQuick = arguments.contains("--quick")
    await runComparison(settings: isQuick ? .quick : .full)
    print("")
    runContentionSection(settings: isQuick ? .quick : .full)
}

/// The contention table, where `Synchronization`'s atomics exist.
func runContentionSection(settings: ContentionSettings) {
    if #available(macOS 15.0, iOS 18.0, *) {
        runContention(settings: settings)
    } else {
        print("The contention table needs macOS 15 (the Synchronization module's atomics).")
    }
}
