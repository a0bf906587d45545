import Testing
import Stimpak

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-shot signal that threads can wait on, with a deadline so that a bug fails the test instead of
/// hanging it.
final class Signal: @unchecked Sendable {  // `isSet` is guarded by `lock`
    private let lock = TestLock()
    private var isSet = false

    func fire() { lock.withLock { isSet = true } }

    /// How long a hook or key holds a thread that the test always lets go. It only keeps a failed test from
    /// hanging: a test's own `await` may resume tens of seconds late when the suite's synchronous tests occupy
    /// the cooperative pool, and a hold that timed out first would let the held code run on too early.
    static let holdLimit = 900.0

    /// Waits up to `seconds`; returns whether the signal fired.
    @discardableResult
    func wait(seconds: Double = 10) -> Bool {
        let deadline = Self.now() + seconds
        while !lock.withLock({ isSet }) {
            if Self.now() >= deadline { return false }
            usleep(1_000)
        }
        return true
    }

    /// Seconds on the monotonic clock.
    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

final class Counter: @unchecked Sendable {  // `value` is guarded by `lock`
    private let lock = TestLock()
    private var storage = 0
    func increment() { lock.withLock { storage += 1 } }
    /// Increments, and returns the new value.
    func next() -> Int {
        lock.withLock {
            storage += 1; return storage
        }
    }
    var value: Int { lock.withLock { storage } }
}

@Suite struct ConcurrencyTests {
    static let threads = 8

    @Test(arguments: [Reuse.singleton, Reuse.inScope])
    func reusedFactoryRunsExactlyOnceUnderContention(reuse: Reuse) {
        for round in 0..<50 {
            let made = Counter()
            let container = Container()
            container.register(Foo.self, reuse: reuse) { () -> Foo in
                made.increment()
                usleep(200)  // widen the window in which the others arrive
                return Foo()
            }
            let scope = container.openScope(round)
            let results = ResultBox(count: Self.threads)
            hammer(threads: Self.threads) { index in
                results.set(index, scope.resolve(Foo.self))
            }
            #expect(made.value == 1)
            #expect(results.allSame, "every thread got the one instance")
        }
    }

    @Test func oneInstancePerArgumentValueUnderContention() {
        let made = Counter()
        let container = Container()
        // Chaining onto a one-argument registration doesn't type-check (a limit of parameter-pack inference).
        let byName = container.register(Person.self, reuse: .inScope) { (name: String) -> Person in
            made.increment()
            return Person(name, "")
        }
        byName.compareArgsByValue()
        container.register(Person.self, reuse: .inScope) { (name: String, n: Int) -> Person in
            made.increment()
            return Person(name, "\(n)")
        }
        .compareArgsBy { $0 == $1 }
        let scope = container.openScope("s")
        hammer(threads: Self.threads) { index in
            for i in 0..<200 {
                let name = "p\((i + index) % 10)"
                _ = scope.resolve(Person.self, name)
                _ = scope.resolve(Person.self, (name, i % 3))
            }
        }
        #expect(made.value == 10 + 30)
    }

    @Test func scopesOpenedAndDisposedWhileOthersResolve() {
        let log = EventLog()
        let created = Counter()
        let container = Container()
        container.register(Clock.self, reuse: .singleton)
        container.register(Tracked.self, reuse: .inScope) { (scope: Scope) -> Tracked in
            _ = try scope.require(Clock.self)  // throws if another thread disposed the scope meanwhile
            created.increment()
            return Tracked("t", log: log)
        }
        container.register(Person.self) { scope in Person(try scope.require(Tracked.self).name, "") }
        let shared = container.openScope("shared")
        hammer(threads: Self.threads) { index in
            for i in 0..<300 {
                switch (index + i) % 3 {
                case 0:
                    let scope = container.openScope("request-\(index)-\(i)")
                    _ = scope.resolve(Person.self)
                    _ = scope.openScope("nested").resolve(Tracked.self)
                    scope.dispose()
                case 1:
                    _ = shared.resolve(Person.self)
                    _ = container.resolve(Clock.self)
                default:
                    // Several threads open and dispose the same key at once.
                    let scope = container.openScope("contended-\(i % 4)")
                    _ = scope.resolve(Tracked.self)
                    container.disposeScope("contended-\(i % 4)")
                }
            }
        }
        container.dispose()
        #expect(log.count(of: "dispose t") == created.value, "every instance made was disposed exactly once")
    }

    /// The container's lock is all that keeps the scope tree's bookkeeping (children tables, caches, disposal
    /// lists) consistent: with more threads than cores, most lock calls are contended and many put threads to
    /// sleep, so a lock that let two holders in, or lost a wake-up, shows as a wrong count or a hang.
    @Test func scopeBookkeepingStaysExactWhenEveryThreadContendsForTheLock() {
        let created = Counter()
        let container = Container()
        container.register(Clock.self, reuse: .inScope) { _ in
            created.increment()
            return Clock()
        }
        let perThread = 2_000
        hammer(threads: Self.threads) { index in
            for i in 0..<perThread {
                let scope = container.openScope(index * perThread + i)
                scope.provide(i, key: "i")
                _ = scope.resolve(Clock.self)
                // One scope in ten stays open.
                if i % 10 != 0 { scope.dispose() }
            }
        }
        let open = Self.threads * perThread / 10
        #expect(created.value == Self.threads * perThread)
        #expect(container.openScopeCount == open)
        for index in 0..<Self.threads {
            for i in stride(from: 0, to: perThread, by: 10) {
                #expect(container[index * perThread + i]?.resolve(Int.self, key: "i") == i)
            }
        }
        container.dispose()
        #expect(container.openScopeCount == 0)
    }

    /// Disposal and registration changes wait for every thread that may be reading: here more threads are alive at
    /// once than the list of readers first has room for, and whole batches of them exit (and leave the list) and
    /// are replaced, while one thread disposes scopes and replaces a registration.
    @Test func writersWaitForManyReaderThreadsThatComeAndGo() {
        let container = Container()
        container.register(Clock.self, reuse: .singleton)
        let shared = container.openScope("shared")
        container.register(Tracked.self, reuse: .inScope) { Tracked("t", log: EventLog()) }
        let resolved = Counter()
        for round in 0..<3 {
            hammer(threads: 40) { index in
                if index == 0 {
                    for i in 0..<200 {
                        let scope = container.openScope(i)
                        _ = scope.resolve(Tracked.self)
                        scope.dispose()
                        container.register(Person.self, ifAlreadyRegistered: .replace) { Person("\(round)", "\(i)") }
                    }
                } else {
                    for _ in 0..<500 {
                        guard container.resolve(Clock.self) != nil, shared.resolve(Tracked.self) != nil else { continue }
                        resolved.increment()
                    }
                }
            }
        }
        #expect(resolved.value == 3 * 39 * 500)
        #expect(container.resolve(Person.self)?.first == "2")
        container.dispose()
    }

    @Test func registeringAndUnregisteringWhileOthersResolve() {
        let container = Container()
        container.register(Foo.self, reuse: .singleton) { Foo() }
        hammer(threads: Self.threads) { index in
            for i in 0..<500 {
                if index == 0 {
                    container.register(Person.self, key: i % 5, ifAlreadyRegistered: .replace) { Person("\(i)", "") }
                    container.unregister(Person.self, key: (i + 2) % 5)
                } else {
                    _ = container.resolve(Person.self, key: i % 5)
                    #expect(container.resolve(Foo.self) != nil)
                }
            }
        }
    }

    @Test func unrelatedFactoriesDoNotWaitForEachOther() {
        let bIsMade = Signal()
        let aSawB = Counter()
        let container = Container()
        container.register(A.self, reuse: .singleton) { () -> A in
            // A's factory is still running while another thread makes B: no container-wide lock is held.
            if bIsMade.wait() { aSawB.increment() }
            return A(nil)
        }
        container.register(B.self, reuse: .singleton) { () -> B in
            defer { bIsMade.fire() }
            return B(nil)
        }
        hammer(threads: 2) { index in
            if index == 0 { _ = container.resolve(A.self) } else { _ = container.resolve(B.self) }
        }
        #expect(aSawB.value == 1)
    }

    @Test func aCycleAcrossTwoThreadsIsReportedNotDeadlocked() {
        let aStarted = Signal()
        let bStarted = Signal()
        let container = Container()
        container.register(A.self, reuse: .singleton) { scope -> A in
            aStarted.fire()
            bStarted.wait()
            return A(try scope.require(B.self))
        }
        container.register(B.self, reuse: .singleton) { scope -> B in
            bStarted.fire()
            aStarted.wait()
            return B(try scope.require(A.self))
        }
        let codes = ResultBox(count: 2)
        hammer(threads: 2) { index in
            do throws(ResolutionError) {
                if index == 0 { _ = try container.require(A.self) } else { _ = try container.require(B.self) }
                codes.set(index, "resolved")
            } catch {
                codes.set(index, error.code.description)
            }
        }
        #expect(codes.values == ["dependencyCycle", "dependencyCycle"])
    }

    @Test func nestedResolutionsFromManyThreads() {
        let made = Counter()
        let container = Container()
        container.register(Clock.self, reuse: .singleton)
        container.register(B.self, reuse: .inScope) { scope -> B in
            made.increment()
            _ = try scope.require(Clock.self)
            return B(nil)
        }
        container.register(A.self) { scope in A(try scope.require(B.self)) }
        let scopes = (0..<4).map { container.openScope($0) }
        hammer(threads: Self.threads) { index in
            for i in 0..<500 {
                #expect(scopes[(index + i) % 4].resolve(A.self) != nil)
            }
        }
        #expect(made.value == 4)
    }
}

/// Per-thread results, compared after the threads are joined.
final class ResultBox: @unchecked Sendable {  // `storage` is guarded by `lock`
    private let lock = TestLock()
    private var storage: [Any?]

    init(count: Int) { storage = Array(repeating: nil, count: count) }

    func set(_ index: Int, _ value: Any?) { lock.withLock { storage[index] = value } }

    var values: [String] { lock.withLock { storage.map { $0.map { "\($0)" } ?? "nil" } } }

    /// The values that are objects, in order (nils left out).
    var objects: [AnyObject] { lock.withLock { storage.compactMap { $0.map { $0 as AnyObject } } } }

    var allSame: Bool {
        lock.withLock {
            let objects = storage.compactMap { $0 as AnyObject? }
            guard objects.count == storage.count, let first = objects.first else { return false }
            return objects.allSatisfy { $0 === first }
        }
    }
}

/// The lock-free path: published instances stay valid while their scope is disposed, and are released after.
@Suite struct LockFreePathTests {
    @Test func cachedInstancesSurviveConcurrentDisposal() {
        for round in 0..<20 {
            let log = EventLog()
            let made = Counter()
            let container = Container()
            container.register(Tracked.self, reuse: .inScope) { () -> Tracked in
                made.increment()
                return Tracked("t", log: log)
            }
            container.register(Clock.self, reuse: .singleton)
            let scope = container.openScope(round)
            _ = scope.resolve(Tracked.self)
            let seenAfterDispose = Counter()
            hammer(threads: ConcurrencyTests.threads) { index in
                if index == 0 {
                    usleep(100)
                    scope.dispose()
                    return
                }
                for _ in 0..<2_000 {
                    // Either the published instance (alive: its name reads) or nil once disposed.
                    if let tracked = scope.resolve(Tracked.self) {
                        #expect(tracked.name == "t")
                    } else if scope.isDisposed {
                        seenAfterDispose.increment()
                    }
                    #expect(container.resolve(Clock.self) != nil)
                }
            }
            #expect(scope.isDisposed)
            #expect(scope.resolve(Tracked.self) == nil)
            #expect(made.value == 1, "the one instance was served until the dispose")
            #expect(log.count(of: "dispose t") == 1)
        }
    }

    @Test func disposeReleasesPublishedInstances() {
        final class Probe: Sendable {}
        weak var singleton: Probe?
        weak var scoped: Probe?
        let container = Container()
        container.register(Probe.self, reuse: .singleton) { Probe() }
        container.register(Probe.self, reuse: .inScope, key: "scoped") { Probe() }
        let scope = container.openScope("s")
        do {
            singleton = container.resolve(Probe.self)
            scoped = scope.resolve(Probe.self, key: "scoped")
            #expect(container.resolve(Probe.self) === singleton, "the published singleton")
            #expect(scope.resolve(Probe.self, key: "scoped") === scoped, "the published .inScope instance")
        }
        scope.dispose()
        Container.reclaim()
        #expect(scoped == nil, "the scope released its instance")
        #expect(singleton != nil)
        container.dispose()
        Container.reclaim()
        #expect(singleton == nil, "the container released the singleton")
    }

    @Test func registrationChangesAreSeenByTheNextResolve() {
        let container = Container()
        container.register(Person.self) { Person("first", "") }
        #expect(container.resolve(Person.self)?.first == "first")
        container.register(Person.self, ifAlreadyRegistered: .replace) { Person("second", "") }
        #expect(container.resolve(Person.self)?.first == "second", "the retired table is not used")
        container.unregister(Person.self)
        #expect(container.resolve(Person.self) == nil)
        let callbacks = Counter()
        container.register(Person.self) { Person("third", "") }.resolved { _, _ in callbacks.increment() }
        _ = container.resolve(Person.self)
        #expect(callbacks.value == 1, "a transient with a callback goes through the locked path")
    }
}

/// Threads that arrive while another thread is making a reused instance wait for that creation, whatever
/// way it ends; the scope's storage grows while other threads read it.
@Suite struct CreationInFlightTests {
    @Test(arguments: [Reuse.singleton, Reuse.inScope])
    func waitersShareAFailedCreationAndTheNextResolveMakesIt(reuse: Reuse) {
        for round in 0..<20 {
            let attempts = Counter()
            let container = Container()
            container.register(Foo.self, reuse: reuse) { () throws -> Foo in
                attempts.increment()
                if attempts.value == 1 {
                    usleep(2_000)  // the others arrive and wait for this creation
                    throw Boom()
                }
                return Foo()
            }
            let scope = container.openScope(round)
            let results = ResultBox(count: ConcurrencyTests.threads)
            hammer(threads: ConcurrencyTests.threads) { index in
                results.set(index, scope.resolve(Foo.self))
            }
            // The waiters got the failure; a thread that arrived after it made the instance, the one retry.
            let instances = results.objects
            #expect(attempts.value <= 2)
            let made = scope.resolve(Foo.self)
            #expect(made != nil)
            #expect(attempts.value == 2, "the failed creation, then exactly one that succeeded")
            #expect(instances.allSatisfy { $0 === made })
        }
    }

    @Test(arguments: [Reuse.singleton, Reuse.inScope])
    func waitersGetTheInstanceOnlyAfterItsResolvedCallback(reuse: Reuse) {
        for round in 0..<20 {
            let callbacks = Counter()
            let container = Container()
            container.register(Foo.self, reuse: reuse) { Foo() }
                .resolved { _, _ in
                    usleep(2_000)
                    callbacks.increment()
                }
            let scope = container.openScope(round)
            let results = ResultBox(count: ConcurrencyTests.threads)
            let sawCallback = ResultBox(count: ConcurrencyTests.threads)
            hammer(threads: ConcurrencyTests.threads) { index in
                results.set(index, scope.resolve(Foo.self))
                sawCallback.set(index, callbacks.value == 1)
            }
            #expect(callbacks.value == 1)
            #expect(results.allSame)
            #expect(sawCallback.values.allSatisfy { $0 == "true" })
        }
    }

    /// A scope keeps an `.inScope` instance in its table, marked by the making thread while it is made;
    /// waiting threads turn the mark into a slot. Disposing the scope meanwhile must wake them, hand the
    /// instance to no one, and dispose it.
    @Test func disposingTheScopeWhileItsInstanceIsMadeWakesTheWaiters() {
        for round in 0..<10 {
            let log = EventLog()
            let started = Signal()
            let finish = Signal()
            // A waiter nobody wakes would time out (`waitTimeout`) instead of hanging the test.
            let container = Container(waitLimit: .seconds(2))
            container.register(Tracked.self, reuse: .inScope) { () -> Tracked in
                started.fire()
                finish.wait()
                return Tracked("made", log: log)
            }
            let scope = container.openScope(round)
            let codes = ResultBox(count: 3)
            hammer(threads: 4) { index in
                guard index < 3 else {
                    // The fourth thread disposes the scope while the first one is making the instance.
                    started.wait()
                    usleep(20_000)  // widen the window in which the other two wait for the creation
                    scope.dispose()
                    finish.fire()
                    return
                }
                if index > 0 { started.wait() }
                do throws(ResolutionError) {
                    _ = try scope.require(Tracked.self)
                    codes.set(index, "resolved")
                } catch {
                    codes.set(index, error.code.description)
                }
            }
            #expect(codes.values == ["scopeDisposed", "scopeDisposed", "scopeDisposed"])
            #expect(log.events == ["dispose made"], "the instance made for a disposed scope is disposed")
        }
    }

    /// Threads waiting on a creation that fails get its error; they do not run the factory again one after
    /// another. The next resolve tries again, once. (`.inScope`: a creation marked in the scope's table.)
    @Test(arguments: [Reuse.singleton, Reuse.inScope])
    func threadsWaitingOnAFailedCreationShareItsFailure(reuse: Reuse) {
        let attempts = Counter()
        let arrived = Counter()
        let started = Signal()
        let container = Container()
        container.register(Foo.self, reuse: reuse) { () throws -> Foo in
            if attempts.next() == 1 {
                started.fire()
                while arrived.value < 20 { usleep(1_000) }
                usleep(100_000)  // the last arrivals reach the wait meanwhile
            }
            throw Boom()
        }
        let scope = container.openScope("request")
        let codes = ResultBox(count: 21)
        hammer(threads: 21) { index in
            if index > 0 {
                started.wait()
                arrived.increment()
            }
            do throws(ResolutionError) {
                _ = try scope.require(Foo.self)
                codes.set(index, "resolved")
            } catch {
                codes.set(index, error.underlyingError is Boom ? error.code.description : "\(error)")
            }
        }
        #expect(attempts.value == 1, "the waiters do not run the factory again")
        #expect(codes.values == Array(repeating: "factoryFailed", count: 21))
        #expect(scope.resolve(Foo.self) == nil)
        #expect(attempts.value == 2, "the next resolve tries again, once")
    }

    /// An `await` resolve that finds a synchronous creation under way in the scope's table waits for it.
    @Test func anAwaitedResolveWaitsForASynchronousCreation() async throws {
        let made = Counter()
        let started = Signal()
        let done = Signal()
        let container = Container()
        container.register(Foo.self, reuse: .inScope) { () -> Foo in
            made.increment()
            started.fire()
            usleep(20_000)  // the awaited resolve arrives meanwhile
            return Foo()
        }
        let scope = container.openScope("request")
        let fromThread = ResultBox(count: 1)
        detach {
            fromThread.set(0, scope.resolve(Foo.self))
            done.fire()
        }
        #expect(started.wait())
        let awaited = try await scope.require(Foo.self)
        #expect(done.wait())
        #expect(made.value == 1)
        #expect(fromThread.objects.first === awaited)
    }

    @Test func aScopeWithManyInstancesGrowsWhileOthersResolveFromIt() {
        let count = 100
        let made = (0..<count).map { _ in Counter() }
        let container = Container()
        for key in 0..<count {
            container.register(Foo.self, reuse: .inScope, key: key) {
                made[key].increment(); return Foo()
            }
        }
        let scope = container.openScope("request")
        let seen = (0..<ConcurrencyTests.threads).map { _ in ResultBox(count: count) }
        hammer(threads: ConcurrencyTests.threads) { thread in
            for pass in 0..<3 {
                for step in 0..<count {
                    // Each thread walks the keys in its own order, so creations and lookups interleave.
                    let offset = thread * 13 + pass
                    let key = (thread % 2 == 0 ? step + offset : count - 1 - step + offset) % count
                    let foo = scope.resolve(Foo.self, key: key)
                    if pass == 0 { seen[thread].set(key, foo) }
                }
            }
        }
        #expect(made.allSatisfy { $0.value == 1 }, "each key's instance made once")
        for key in 0..<count {
            let mine = scope.resolve(Foo.self, key: key)
            #expect(mine != nil)
            #expect(seen.allSatisfy { $0.objects[key] === mine }, "every thread got the scope's instance of key \(key)")
        }
    }
}
