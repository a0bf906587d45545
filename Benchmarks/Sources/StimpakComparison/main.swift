// Runs the scenarios of issue 3 three ways in one process: written by hand (the floor), Swinject,
// Stimpak; prints a markdown table of ns/op with each container's ratio to the floor.
//
//   swift run -c release StimpakComparison           # full run (about a minute)
//   swift run -c release StimpakComparison --quick   # tiny iteration counts, for CI: checks it still runs
let arguments = CommandLine.arguments.dropFirst()
if arguments.contains("--help") || arguments.contains("-h") {
    print("usage: StimpakComparison [--quick]")
} else {
    await runComparison(settings: arguments.contains("--quick") ? .quick : .full)
}
