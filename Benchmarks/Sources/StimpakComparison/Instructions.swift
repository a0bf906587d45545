import Foundation
import Stimpak
import StimpakFixtures
import Swinject

// The instruction-count mode: each scenario runs in a process of its own under callgrind, twice, with two
// iteration counts; the difference of the two counts divided by the difference of the iterations is the
// instructions one operation costs, whatever the setup cost. Steady on a shared machine, where wall clock is not.
//
//   swift run -c release StimpakComparison --instructions      # needs valgrind; a few minutes

/// One operation of a scenario, after a setup that is the same in both runs.
struct InstructionScenario: Sendable {
    let name: String
    /// Returns the loop to count: it runs the operation `n` times.
    let prepare: @Sendable () -> (Int) -> Void
}

final class KeyedFoo: Sendable { init() {} }  // keyed, with the key held as `AnyHashable`
final class Provided9: Sendable { init() {} }  // a provided value, 7 scopes below

@inline(never)
func keyedContainer() -> Stimpak.Container {
    let container = Stimpak.Container()
    container.register(KeyedFoo.self, key: "x") { KeyedFoo() }
    return container
}

/// 1,000 keyed registrations, a scope, the first resolve, dispose: the cold start of the table (both
/// tables run it).
@inline(never)
func keyedColdStartStimpak() -> Foo7 {
    let container = Stimpak.Container()
    for type in fillerTypes { registerKeyedFiller(container, type) }
    container.register(Foo7.self, key: "k") { Foo7() }
    let request = container.openScope(1)
    defer { request.dispose() }
    return request.resolve(Foo7.self, key: "k")!
}

/// The same with Swinject: 1,000 registrations with a name, a child container, the first resolve.
@inline(never)
func keyedColdStartSwinject() -> Foo7 {
    let container = Swinject.Container()
    for type in fillerTypes { registerKeyedFiller(container, type) }
    container.register(Foo7.self, name: "k") { _ in Foo7() }
    let request = Swinject.Container(parent: container)
    return request.resolve(Foo7.self, name: "k")!
}

private func registerKeyedFiller<T: Filler>(_ container: Stimpak.Container, _: T.Type) {
    container.register(T.self, key: "k") { T() }
}

private func registerKeyedFiller<T: Filler>(_ container: Swinject.Container, _: T.Type) {
    container.register(T.self, name: "k") { _ in T() }
}

let instructionScenarios: [InstructionScenario] = [
    InstructionScenario(name: "floor-foo") { { n in for _ in 0..<n { sink(Foo1()) } } },
    InstructionScenario(name: "transient") {
        let container = makeStimpak()
        return { n in for _ in 0..<n { sink(container.resolve(Foo1.self)!) } }
    },
    InstructionScenario(name: "singleton") {
        let container = makeStimpak()
        _ = container.resolve(Foo2.self)
        return { n in for _ in 0..<n { sink(container.resolve(Foo2.self)!) } }
    },
    InstructionScenario(name: "floor-3-dependencies") { { n in for _ in 0..<n { sink(Root3(a: A3(), b: B3(), c: C3())) } } },
    InstructionScenario(name: "3-dependencies") {
        let container = makeStimpak()
        return { n in for _ in 0..<n { sink(container.resolve(Root3.self)!) } }
    },
    InstructionScenario(name: "floor-2-arguments") { { n in for _ in 0..<n { sink(WithArgs4(s: "a", i: 1)) } } },
    InstructionScenario(name: "2-arguments") {
        let container = makeStimpak()
        return { n in for _ in 0..<n { sink(container.resolve(WithArgs4.self, ("a", 1))!) } }
    },
    // Issue 32: providers bound to their registration when made (a call skips the lookup and the read section).
    InstructionScenario(name: "provider-transient") {
        let container = makeStimpak()
        let makeFoo = container.provider(Foo1.self)
        // The loop holds the container: releasing it would dispose its scopes.
        return { n in withExtendedLifetime(container) { for _ in 0..<n { sink(try! makeFoo()) } } }
    },
    InstructionScenario(name: "provider-singleton") {
        let container = makeStimpak()
        let makeFoo = container.provider(Foo2.self)
        _ = try! makeFoo()
        // The loop holds the container: releasing it would dispose its scopes.
        return { n in withExtendedLifetime(container) { for _ in 0..<n { sink(try! makeFoo()) } } }
    },
    InstructionScenario(name: "provider-2-arguments") {
        let container = makeStimpak()
        let makeWithArgs = container.provider(WithArgs4.self, arguments: (String, Int).self)
        return { n in withExtendedLifetime(container) { for _ in 0..<n { sink(try! makeWithArgs(("a", 1))) } } }
    },
    InstructionScenario(name: "keyed-typed") {
        let container = makeStimpak()
        return { n in for _ in 0..<n { sink(container.resolve(Foo5.self, key: "x")!) } }
    },
    InstructionScenario(name: "keyed-anyhashable") {
        let container = keyedContainer()
        let key = AnyHashable("x")
        return { n in for _ in 0..<n { sink(container.resolve(KeyedFoo.self, key: key)!) } }
    },
    InstructionScenario(name: "provided-7-below") {
        let container = makeStimpak()
        let holder = container.openScope("holder")
        holder.provide(Provided9())
        var deep = holder
        for level in 1...7 { deep = deep.openScope(level) }
        let scope = deep
        _ = scope.resolve(Provided9.self)
        // The loop holds the container: releasing it would dispose its scopes.
        return { n in withExtendedLifetime(container) { for _ in 0..<n { sink(scope.resolve(Provided9.self)!) } } }
    },
    InstructionScenario(name: "request-cycle") {
        let container = makeStimpak()
        return { n in for id in 0..<n { stimpakRequestCycle(container, id: id) } }
    },
    // The loop runs in a task, so that each `await` is a real one; both runs pay the same task and semaphore.
    InstructionScenario(name: "async-singleton") {
        let container = makeStimpak()
        let made = DispatchSemaphore(value: 0)
        Task { _ = try? await container.require(Foo10A.self); made.signal() }
        made.wait()
        return { n in
            let done = DispatchSemaphore(value: 0)
            Task {
                for _ in 0..<n { sink(await container.resolve(Foo10A.self)!) }
                done.signal()
            }
            done.wait()
        }
    },
    // A server's request: open a scope, `await` its `.inScope` session (an async factory, an async hook),
    // `await dispose()`; against the same session made and closed synchronously, in the same task loop.
    InstructionScenario(name: "async-session-cycle") {
        let container = makeStimpak()
        return { n in
            inTask {
                for _ in 0..<n {
                    let request = container.openScope()
                    sink(await request.resolve(AsyncSession10.self)!)
                    await request.dispose()
                }
            }
        }
    },
    InstructionScenario(name: "sync-session-cycle") {
        let container = makeStimpak()
        return { n in
            inTask {
                for _ in 0..<n { syncSessionCycle(container) }
            }
        }
    },
    // Between the two: the synchronous session, resolved and disposed with `await` (what the async session adds
    // beyond the awaits themselves).
    InstructionScenario(name: "awaited-sync-session-cycle") {
        let container = makeStimpak()
        return { n in
            inTask {
                for _ in 0..<n {
                    let request = container.openScope()
                    sink(await request.resolve(SyncSession10.self)!)
                    await request.dispose()
                }
            }
        }
    },
    InstructionScenario(name: "swinject-transient") {
        let container = makeSwinject()
        return { n in for _ in 0..<n { sink(container.resolve(Foo1.self)!) } }
    },
    InstructionScenario(name: "swinject-request-cycle") {
        let container = makeSwinject()
        return { n in for _ in 0..<n { swinjectRequestCycle(container) } }
    },
    InstructionScenario(name: "cold-start") {
        { n in for _ in 0..<n { sink(keyedColdStartStimpak()) } }
    },
    InstructionScenario(name: "swinject-cold-start") {
        { n in for _ in 0..<n { sink(keyedColdStartSwinject()) } }
    },
]

/// One synchronous request cycle, in a synchronous function so that a task can run it: the synchronous
/// `dispose()` is unavailable in async code.
func syncSessionCycle(_ container: Stimpak.Container) {
    let request = container.openScope()
    sink(request.resolve(SyncSession10.self)!)
    request.dispose()
}

/// Runs `body` in a task and waits for it: both runs of a scenario pay the same task and semaphore.
func inTask(_ body: @escaping @Sendable () async -> Void) {
    let done = DispatchSemaphore(value: 0)
    Task {
        await body()
        done.signal()
    }
    done.wait()
}

/// Runs one scenario `iterations` times (the process that callgrind counts).
func runInstructionScenario(_ name: String, iterations: Int) {
    guard let scenario = instructionScenarios.first(where: { $0.name == name }) else {
        print("unknown scenario \(name)")
        exit(2)
    }
    let loop = scenario.prepare()
    loop(iterations)
}

/// This program without its debug information, which valgrind cannot read in a Swift release build.
func strippedCopy() -> String? {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("StimpakComparison-stripped").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["strip", "-o", path, CommandLine.arguments[0]]
    do { try process.run() } catch { return nil }
    process.waitUntilExit()
    return process.terminationStatus == 0 ? path : nil
}

/// Instructions per operation of `name`, from two callgrind runs of `program` (this one, stripped).
func countInstructions(_ name: String, program: String, small: Int, large: Int) -> Double? {
    func collected(_ iterations: Int) -> Double? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", program,
            "--scenario", name, "--iterations", String(iterations),
        ]
        // One hashing seed for every run: with a random one, the cold start's dictionaries probe differently in
        // each process, and its count moves by half a percent from run to run.
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_DETERMINISTIC_HASHING"] = "1"
        process.environment = environment
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let output = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard let line = output.split(separator: "\n").first(where: { $0.contains("Collected :") }),
              let number = line.split(separator: " ").last.flatMap({ Double($0) })
        else { return nil }
        return number
    }
    guard let first = collected(small), let second = collected(large) else { return nil }
    return (second - first) / Double(large - small)
}

/// The instruction-count table: each scenario of the table, with its goal.
func runInstructionComparison() {
    guard let program = strippedCopy() else {
        print("strip did not run: no instruction counts")
        return
    }
    var counts: [String: Double] = [:]
    for scenario in instructionScenarios {
        let isCold = scenario.name.contains("cold-start")
        guard let count = countInstructions(scenario.name, program: program, small: isCold ? 2 : 20_000, large: isCold ? 4 : 40_000) else {
            print("valgrind did not run (is it installed?): no instruction counts")
            return
        }
        counts[scenario.name] = count
    }
    let foo = counts["floor-foo"]!
    func row(_ label: String, _ key: String, floor: Double, floorName: String, goal: Double, swinject: String? = nil) -> String {
        let value = counts[key]!
        let ratio = value / floor
        let swinjectText = swinject.flatMap { counts[$0] }.map { String(format: "%.0f", $0) } ?? "—"
        return String(format: "| %@ | %.0f | %@ | %.0f | %.2f× %@ | ≤ %g× %@ | %@ |",
                      label, floor, floorName, value, ratio, floorName, goal, floorName, swinjectText)
            + (ratio <= goal ? " ✅ |" : " ❌ |")
    }
    print("| scenario | floor | floor is | Stimpak | Stimpak ÷ floor | goal | Swinject | met |")
    print("|---|---:|---|---:|---:|---|---:|---|")
    print(row("transient, no dependencies", "transient", floor: foo, floorName: "`Foo()`", goal: 1.45, swinject: "swinject-transient"))
    print(row("singleton, cached", "singleton", floor: foo, floorName: "`Foo()`", goal: 0.5))
    print(row("transient with 3 transient dependencies", "3-dependencies", floor: counts["floor-3-dependencies"]!,
              floorName: "hand-written", goal: 1.5))
    print(row("two runtime arguments", "2-arguments", floor: counts["floor-2-arguments"]!, floorName: "hand-written", goal: 1.5))
    print(row("bound `Provider` call, transient", "provider-transient", floor: foo, floorName: "`Foo()`", goal: 1.15))
    print(row("bound `Provider` call, cached singleton", "provider-singleton", floor: foo, floorName: "`Foo()`", goal: 0.4))
    print(row("bound `ArgumentProvider` call, two runtime arguments", "provider-2-arguments",
              floor: counts["floor-2-arguments"]!, floorName: "hand-written", goal: 1.2))
    print(row("keyed, `key: \"x\"` (typed key)", "keyed-typed", floor: foo, floorName: "`Foo()`", goal: 2.0))
    print(row("keyed, key passed as `AnyHashable`", "keyed-anyhashable", floor: foo, floorName: "`Foo()`", goal: 3.0))
    print(row("a `provide`d value 7 scopes below", "provided-7-below", floor: foo, floorName: "`Foo()`", goal: 1.0))
    print(row("request cycle: open, 2 × `.inScope`, dispose", "request-cycle", floor: foo, floorName: "`Foo()`", goal: 12,
              swinject: "swinject-request-cycle"))
    // Not in the table: an `await` on a cached instance must stay the synchronous path inlined into
    // the caller (a change that kept it out of line once made it cost 2.8× the synchronous resolve).
    print(row("`await resolve`, cached singleton made by an async factory", "async-singleton", floor: counts["singleton"]!,
              floorName: "sync", goal: 1.2))
    // Issue 30: a request's async `.inScope` session, made by an async factory and closed by an async hook,
    // against the same made and closed synchronously.
    print(row("request cycle, async `.inScope` `AsyncDisposable` session, `await dispose()`", "async-session-cycle",
              floor: counts["sync-session-cycle"]!, floorName: "sync", goal: 1.5))
    let cold = counts["cold-start"]!
    let swinjectCold = counts["swinject-cold-start"]!
    print(String(format: "| cold start: 1,000 keyed registrations, a scope, first resolve, dispose | — | — | %.0f | %.2f× Swinject | ≤ Swinject | %.0f | %@ |",
                 cold, cold / swinjectCold, swinjectCold, cold <= swinjectCold ? "✅" : "❌"))
}

// MARK: - Memory

#if canImport(Glibc)
import CBenchmarkSink

/// Bytes the allocator has handed out and not taken back (glibc's `mallinfo2().uordblks`).
private func allocatedBytes() -> Int { Int(stimpak_benchmark_allocated_bytes()) }

/// Bytes per open empty scope, and per first cached instance in a scope (the instance, its box and slot, the
/// scope's table), from 10,000 of each, held at once.
func runMemoryMeasurement() {
    let container = makeStimpak()
    let count = 10_000
    var scopes: [Stimpak.Scope] = []
    scopes.reserveCapacity(count)
    let start = allocatedBytes()
    for id in 0..<count { scopes.append(container.openScope(id)) }
    let opened = allocatedBytes()
    for scope in scopes { sink(scope.resolve(Request6.self)!) }
    let cached = allocatedBytes()
    let instance = 16   // a Swift object's header: `Request6` has no stored property
    print(String(format: "| an open empty scope | %.0f bytes |", Double(opened - start) / Double(count)))
    print(String(format: "| its first cached `.inScope` instance (a %d-byte object and the scope's table) | %.0f bytes |",
                 instance, Double(cached - opened) / Double(count)))
    withExtendedLifetime((container, scopes)) {}
}
#else
func runMemoryMeasurement() {
    print("The memory measurement reads glibc's mallinfo: Linux only.")
}
#endif
