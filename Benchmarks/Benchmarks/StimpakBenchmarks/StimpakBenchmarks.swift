// Stimpak's resolve paths on ordo-one/benchmark: wall clock percentiles and malloc counts per operation.
//
//   swift package benchmark                                                    # run, print the tables
//   swift package benchmark thresholds check                                   # compare with Thresholds/
//   swift package --allow-writing-to-package-directory benchmark thresholds update   # rewrite Thresholds/
//
// Every benchmark loops 1,000 operations per iteration (`scalingFactor: .kilo`), so the figures are per operation.
// A cached resolve (singleton, `.inScope` hit, keyed singleton) should allocate nothing; a transient only its
// instance. The thresholds fail a check on any change in malloc count (a cold start's on one of more than 4), and
// on a p90 wall clock over three times the committed one: on this 2-core VM the same binary runs at 1× or 2× speed
// from one process to the next (hash seed fixed or not), so wall clock catches only gross regressions; the malloc
// counts are exact and stable.
// Names have no spaces or slashes: benchmark 1.38.1 writes Thresholds/ files with those replaced by `_`
// but looks them up by the raw name, so a name with a space never finds its thresholds.
import Benchmark
import Foundation
import Stimpak
import StimpakFixtures
import Synchronization

final class Foo: Sendable { init() {} }
final class Shared: Sendable { init() {} }
final class KeyedShared: Sendable { init() {} }
final class Scoped: Sendable { init() {} }
final class Request: Sendable { init() {} }
final class A: Sendable { init() {} }
final class B: Sendable { init() {} }
final class C: Sendable { init() {} }
final class Root: Sendable {
    let a: A
    let b: B
    let c: C
    init(a: A, b: B, c: C) {
        self.a = a
        self.b = b
        self.c = c
    }
}
final class WithArgs: Sendable {
    let s: String
    let i: Int
    init(s: String, i: Int) {
        self.s = s
        self.i = i
    }
}
final class Target: Sendable { init() {} }
final class SessionScoped: Sendable { init() {} }
final class WeaklyShared: Sendable { init() {} }
final class Provided: Sendable { init() {} }
final class AsyncShared: Sendable { init() {} }
final class AsyncRequest: Sendable { init() {} }
final class Contended: Sendable { init() {} }
struct SessionID: Hashable, Sendable { let id: Int }

func makeContainer() -> Container {
    let container = Container()
    container.register(Foo.self) { Foo() }
    container.register(Shared.self, reuse: .singleton) { Shared() }
    container.register(KeyedShared.self, reuse: .singleton, key: "x") { KeyedShared() }
    container.register(Foo.self, key: "x") { Foo() }
    container.register(Scoped.self, reuse: .inScope) { Scoped() }
    container.register(Request.self, reuse: .inScope) { Request() }
    container.register(A.self) { A() }
    container.register(B.self) { B() }
    container.register(C.self) { C() }
    container.register(Root.self) { (scope: Scope) in
        Root(a: try scope.require(A.self), b: try scope.require(B.self), c: try scope.require(C.self))
    }
    container.register(WithArgs.self) { (s: String, i: Int) in WithArgs(s: s, i: i) }
    container.register(SessionScoped.self, reuse: .scopedTo(SessionID.self)) { SessionScoped() }
    container.register(WeaklyShared.self, reuse: .weak) { WeaklyShared() }
    container.register(AsyncShared.self, reuse: .singleton) { () async in AsyncShared() }
    container.register(AsyncRequest.self, reuse: .inScope) { () async in AsyncRequest() }
    return container
}

private func registerFiller<T: Filler>(_ container: Container, _: T.Type) {
    container.register(T.self) { T() }
}

/// 1,000 registrations of distinct generated types, plus `Target`.
func makeLargeContainer() -> Container {
    let container = Container()
    for type in fillerTypes { registerFiller(container, type) }
    container.register(Target.self) { Target() }
    return container
}

private func registerKeyedFiller<T: Filler>(_ container: Container, _: T.Type) {
    container.register(T.self, key: "k") { T() }
}

/// The performance issue's cold start: 1,000 keyed registrations.
func makeLargeKeyedContainer() -> Container {
    let container = Container()
    for type in fillerTypes { registerKeyedFiller(container, type) }
    container.register(Target.self, key: "k") { Target() }
    return container
}

let benchmarks: @Sendable () -> Void = {
    let thresholds: [BenchmarkMetric: BenchmarkThresholds] = [
        .wallClock: .init(relative: [.p90: 200.0]),
        .mallocCountTotal: .init(absolute: [.p90: 0]),
    ]
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 10,
        scalingFactor: .kilo,
        maxDuration: .seconds(1),
        maxIterations: 2_000,
        thresholds: thresholds
    )

    let container = makeContainer()
    let largeContainer = makeLargeContainer()
    let openScope = container.openScope("benchmark")
    _ = openScope.resolve(Scoped.self)
    _ = container.resolve(Shared.self)
    _ = container.resolve(KeyedShared.self, key: "x")

    Benchmark("HandWrittenFoo") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(Foo()) }
    }
    Benchmark("TransientResolve") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(container.resolve(Foo.self)!) }
    }
    Benchmark("SingletonResolve") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(container.resolve(Shared.self)!) }
    }
    Benchmark("InScopeResolveCached") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(openScope.resolve(Scoped.self)!) }
    }
    Benchmark("KeyedSingletonResolve") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(container.resolve(KeyedShared.self, key: "x")!) }
    }
    Benchmark("KeyedTransientResolve") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(container.resolve(Foo.self, key: "x")!) }
    }
    // A key held as `AnyHashable` (read from configuration, a route): allocates nothing either.
    let anyKey = AnyHashable("x")
    Benchmark("KeyedSingletonResolveAnyHashable") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(container.resolve(KeyedShared.self, key: anyKey)!) }
    }
    Benchmark("TransientWith3Dependencies") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(container.resolve(Root.self)!) }
    }
    Benchmark("TwoRuntimeArguments") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(container.resolve(WithArgs.self, ("a", 1))!) }
    }
    // Providers bound to their registration when made: a call allocates nothing but the instance.
    let makeFoo = container.provider(Foo.self)
    let makeShared = container.provider(Shared.self)
    let makeWithArgs = container.provider(WithArgs.self, arguments: (String, Int).self)
    Benchmark("BoundProviderTransient") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try! makeFoo()) }
    }
    Benchmark("BoundProviderSingleton") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try! makeShared()) }
    }
    Benchmark("BoundProviderTwoArguments") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try! makeWithArgs(("a", 1))) }
    }
    Benchmark("RequestCycle") { benchmark in
        for id in benchmark.scaledIterations {
            let scope = container.openScope(id)
            blackHole(scope.resolve(Request.self)!)
            blackHole(scope.resolve(Request.self)!)
            scope.dispose()
        }
    }
    // The same cycle while 2 threads resolve cached services nonstop (started in setup, stopped in teardown), so
    // that each disposal meets readers in their read sections. The interposer counts every thread's mallocs, not
    // the measured thread's alone; the readers' cached resolves allocate nothing, so the count is exact and
    // the same as `RequestCycle`'s (a reader that allocated would fail the check, as `SingletonResolve` would).
    if #available(macOS 15.0, iOS 18.0, *) {
        let readers = BackgroundReaders(count: 2) {
            blackHole(container.resolve(Shared.self)!)
            blackHole(openScope.resolve(Scoped.self)!)
        }
        // Wall clock only: a disposal that finds a reader inside its read section queues what it retired (a few
        // allocations), so the malloc count depends on how the readers are scheduled; `RequestCycle` has the
        // exact count.
        Benchmark(
            "RequestCycleWithReaders",
            configuration: .init(metrics: [.wallClock]),
            closure: { benchmark in
                for id in benchmark.scaledIterations {
                    let scope = container.openScope(id)
                    blackHole(scope.resolve(Request.self)!)
                    blackHole(scope.resolve(Request.self)!)
                    scope.dispose()
                }
            },
            setup: { readers.start() },
            teardown: { readers.stop() })
    }
    let sessionRequest = container.openScope(SessionID(id: 1)).openScope(1)
    _ = sessionRequest.resolve(SessionScoped.self)
    _ = sessionRequest.resolve(SessionScoped.self)
    let heldWeak = container.resolve(WeaklyShared.self)
    let holder = container.openScope("holder")
    holder.provide(Provided())
    var deep = holder
    for level in 1...7 { deep = deep.openScope(level) }
    let deepScope = deep

    Benchmark("ScopedToResolveCached") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(sessionRequest.resolve(SessionScoped.self)!) }
    }
    Benchmark("WeakResolveAlive") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(container.resolve(WeaklyShared.self)!) }
        withExtendedLifetime(heldWeak) {}
    }
    Benchmark("ProvidedValue7ScopesBelow") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(deepScope.resolve(Provided.self)!) }
    }
    Benchmark("TransientResolve1000Registrations") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(largeContainer.resolve(Target.self)!) }
    }
    // Async, each beside its synchronous twin above: a cached async-made singleton (`SingletonResolve`), a
    // request cycle with `withScope` (`RequestCycle`), and the first creation wanted by 100 tasks at once.
    Benchmark("AsyncSingletonResolveCached") { benchmark in
        _ = await container.resolve(AsyncShared.self)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(await container.resolve(AsyncShared.self)!) }
    }
    // 8 mallocs a cycle; the task allocator now and then takes a slab more (2 in 1,000 cycles on a CI run): a
    // tolerance of 4 per 1,000, far below one allocation a cycle.
    Benchmark(
        "AsyncRequestCycleWithScope",
        configuration: .init(thresholds: [.mallocCountTotal: .init(absolute: [.p90: 4])])
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            await container.withScope { scope in
                blackHole(await scope.resolve(AsyncRequest.self)!)
                blackHole(await scope.resolve(AsyncRequest.self)!)
            }
        }
    }
    // The task allocations of 100 child tasks vary a little with scheduling: a tolerance, not an exact count.
    Benchmark(
        "AsyncFirstCreation100Tasks",
        configuration: .init(
            scalingFactor: .one, maxDuration: .seconds(2), maxIterations: 500,
            thresholds: [.wallClock: .init(relative: [.p90: 200.0]), .mallocCountTotal: .init(relative: [.p90: 5.0])])
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            let contended = Container()
            contended.register(Contended.self, reuse: .singleton) { () async in Contended() }
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<100 { group.addTask { blackHole(await contended.resolve(Contended.self)!) } }
            }
        }
    }
    // About 3,000 mallocs a cold start, which a change to what a registration allocates moves by 1,000 at a
    // time; one full-suite run in fifteen counted one fewer (p90 3,051 against 3,052, not reproduced alone in
    // eleven runs): a tolerance of 4, which no per-registration change fits in.
    let coldStartThresholds: [BenchmarkMetric: BenchmarkThresholds] = [
        .wallClock: .init(relative: [.p90: 200.0]),
        .mallocCountTotal: .init(absolute: [.p90: 4]),
    ]
    Benchmark(
        "ColdStart1000Registrations",
        configuration: .init(
            scalingFactor: .one, maxDuration: .seconds(2), maxIterations: 200, thresholds: coldStartThresholds)
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            let container = makeLargeContainer()
            blackHole(container.openScope(1).resolve(Target.self)!)
        }
    }
    Benchmark(
        "ColdStart1000KeyedRegistrations",
        configuration: .init(
            scalingFactor: .one, maxDuration: .seconds(2), maxIterations: 200, thresholds: coldStartThresholds)
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            let container = makeLargeKeyedContainer()
            blackHole(container.openScope(1).resolve(Target.self, key: "k")!)
        }
    }
}

/// Threads that call `read` nonstop between ``start()`` and ``stop()``.
@available(macOS 15.0, iOS 18.0, *)
final class BackgroundReaders: Sendable {
    private let count: Int
    private let read: @Sendable () -> Void
    private let isStopped = Atomic<Bool>(false)
    private let started = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)

    init(count: Int, read: @escaping @Sendable () -> Void) {
        self.count = count
        self.read = read
    }

    /// Starts the threads; returns once each has resolved once (its first resolve allocates its thread state).
    func start() {
        isStopped.store(false, ordering: .relaxed)
        for _ in 0..<count {
            Thread { [self] in
                read()
                started.signal()
                while !isStopped.load(ordering: .relaxed) { read() }
                stopped.signal()
            }.start()
        }
        for _ in 0..<count { started.wait() }
    }

    /// Stops the threads; returns once each has left its loop.
    func stop() {
        isStopped.store(true, ordering: .relaxed)
        for _ in 0..<count { stopped.wait() }
    }
}
