// Runs the scenarios of issue 3 three ways in one process: written by hand (the floor), Swinject,
// Stimpak; prints a markdown table of ns/op with each container's ratio to the floor.
//
//   swift run -c release StimpakComparison           # full run (about a minute)
//   swift run -c release StimpakComparison --quick   # tiny iteration counts, for CI: checks it still runs
//   swift run -c release StimpakComparison --instructions   # instructions per operation, under callgrind
//   swift run -c release StimpakComparison --memory         # bytes per open scope and per cached instance
let arguments = CommandLine.arguments.dropFirst()
if arguments.contains("--help") || arguments.contains("-h") {
    print("usage: StimpakComparison [--quick | --instructions | --memory | --scenario NAME --iterations N]")
} else if let index = arguments.firstIndex(of: "--scenario") {
    let name = arguments[arguments.index(after: index)]
    let iterations = arguments.firstIndex(of: "--iterations").map { Int(arguments[arguments.index(after: $0)]) ?? 1 } ?? 1
    runInstructionScenario(name, iterations: iterations)
} else if arguments.contains("--instructions") {
    runInstructionComparison()
} else if arguments.contains("--memory") {
    runMemoryMeasurement()
} else {
    await runComparison(settings: arguments.contains("--quick") ? .quick : .full)
}
