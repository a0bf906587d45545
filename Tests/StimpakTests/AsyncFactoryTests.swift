import Testing
import Stimpak
import Synchronization

/// A gate that tasks await until it opens: no thread is blocked.
actor AsyncGate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }
}

/// Counts from any task.
actor AsyncCounter {
    private(set) var value = 0
    @discardableResult
    func increment() -> Int {
        value += 1
        return value
    }
}

final class AsyncService: @unchecked Sendable {
    let serial: Int
    let log: EventLog?
    init(serial: Int, log: EventLog? = nil) {
        self.serial = serial
        self.log = log
    }
}

final class DisposableAsync: Disposable, @unchecked Sendable {
    let log: EventLog
    init(log: EventLog) { self.log = log }
    func dispose() { log.append("disposed") }
}

/// Registrations with `async` factories, resolved with `await`.
@Suite(.timeLimit(.minutes(2))) struct AsyncFactoryTests {
    @Test("1,000 tasks racing one async singleton: one creation, one instance, no thread blocked")
    func thousandTasksOneCreation() async throws {
        let container = Container()
        let counter = AsyncCounter()
        container.register(AsyncService.self, reuse: .singleton) {
            let serial = await counter.increment()
            try await Task.sleep(nanoseconds: 20_000_000)  // long enough that the others wait
            return AsyncService(serial: serial)
        }
        let serials = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<1_000 {
                group.addTask { try await container.require(AsyncService.self).serial }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(serials.count == 1_000)
        #expect(Set(serials) == [1])
        #expect(await counter.value == 1)
        #expect(try container.root.requireSynchronously(AsyncService.self).serial == 1, "once made, it resolves synchronously too")
    }

    @Test func aCallbackThatDisposesItsScopeAndFailsLeavesOneDisposal() async {
        let log = EventLog()
        let container = Container()
        container.register(Tracked.self, reuse: .inScope) { () async in Tracked("t", log: log) }
            .resolved { scope, _ in
                scope.dispose()
                throw Boom()
            }
        let scope = container.openScope("s")
        await #expect(throws: ResolutionError.self) { try await scope.require(Tracked.self) }
        #expect(log.events == ["dispose t"])
    }

    @Test func aDecoratorThatFailsDisposesWhatTheAsyncFactoryMade() async {
        let log = EventLog()
        let container = Container()
        container.register(Tracked.self, reuse: .singleton) { () async in Tracked("t", log: log) }
        container.decorate(Tracked.self) { _, _ in throw Boom() }
        await #expect(throws: ResolutionError.self) { try await container.require(Tracked.self) }
        #expect(log.events == ["dispose t"])
    }

    @Test("every option: keys, runtime arguments, the scope-taking form, .inScope per scope, callbacks, decorators")
    func everyOption() async throws {
        let container = Container()
        let log = EventLog()
        container.register(String.self, key: "greeting") { () async in "hello" }
        container.register(AsyncService.self, reuse: .inScope) { (scope: Scope) async throws in
            AsyncService(serial: try await scope.require(Int.self, ("a", 2)), log: log)
        }
        .resolved { _, service in log.append("resolved \(service.serial)") }
        container.register(Int.self) { (name: String, count: Int) async in name.count + count }
        container.decorate(String.self) { _, text in text.uppercased() }
        #expect(try await container.require(String.self, key: "greeting") == "HELLO")
        #expect(await container.resolve(String.self, key: AnyHashable("greeting")) == "HELLO")
        let scope = container.openScope("s")
        let first = try await scope.require(AsyncService.self)
        #expect(first.serial == 3)
        #expect(try await scope.require(AsyncService.self) === first)
        #expect(try await container.openScope("t").require(AsyncService.self) !== first)
        #expect(log.events == ["resolved 3", "resolved 3"])
        #expect(try await scope.require(Int.self, ("abc", 1)) == 4)
    }

    @Test("a synchronous resolve of an async service says to await it, and never blocks")
    func synchronousResolveSaysAwait() async throws {
        let container = Container()
        container.register(AsyncService.self, reuse: .singleton) { () async in AsyncService(serial: 1) }
        container.register(Foo.self) { (scope: Scope) in
            _ = try scope.require(AsyncService.self)
            return Foo()
        }
        let direct = try #require(throws: ResolutionError.self) { try container.root.requireSynchronously(AsyncService.self) }
        #expect(direct.code == .requiresAwait)
        #expect(direct.description.contains("synchronously: its factory is async"))
        #expect(direct.description.contains("Fix: resolve it with try await scope.require(AsyncService.self)"))
        let nested = try #require(throws: ResolutionError.self) { try container.root.requireSynchronously(Foo.self) }
        #expect(nested.code == .requiresAwait)
        #expect(nested.pathDescription == "Foo → AsyncService")
        #expect(nested.description.contains("Fix: make the factory of Foo async too"))
        // From async code, the synchronous factory still cannot await it: the same error.
        await #expect(throws: ResolutionError.self) { try await container.require(Foo.self) }
        _ = try await container.require(AsyncService.self)
        #expect(try container.root.requireSynchronously(AsyncService.self).serial == 1, "cached: no await needed")
    }

    @Test("synchronous services resolve from async code as they do from synchronous code")
    func synchronousServicesFromAsync() async throws {
        let container = Container()
        container.register(Foo.self, reuse: .singleton) { Foo() }
        container.register(Person.self) { (first: String, last: String) in Person(first, last) }
        let foo = try await container.require(Foo.self)
        #expect(try await container.require(Foo.self) === foo)
        #expect(try await container.require(Person.self, ("Ada", "Lovelace")).first == "Ada")
    }

    @Test("a cancelled waiter stops waiting; the creation goes on for the others", arguments: AsyncPlacement.allCases)
    func cancelledWaiter(_ placement: AsyncPlacement) async throws {
        let container = Container()
        let gate = AsyncGate()
        let started = AsyncGate()
        let counter = AsyncCounter()
        container.register(AsyncService.self, reuse: placement.reuse) {
            await started.open()
            await gate.wait()
            return AsyncService(serial: await counter.increment())
        }
        let scope = placement.scope(in: container)
        let creator = Task { try await scope.require(AsyncService.self) }
        await started.wait()
        let waiter = Task { try await scope.require(AsyncService.self) }
        try await Task.sleep(nanoseconds: 10_000_000)
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        await gate.open()
        #expect(try await creator.value.serial == 1)
        #expect(try await scope.require(AsyncService.self).serial == 1)
        #expect(await counter.value == 1)
    }

    @Test(
        "20 tasks waiting on a creation that fails share its failure; the next resolve tries once more",
        arguments: AsyncPlacement.allCases)
    func waitersShareAFailedCreation(_ placement: AsyncPlacement) async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) else { return }
        // One thread: a task runs until it suspends, so the factory fails only once every waiter awaits it.
        let executor = ThreadPoolExecutor(threads: 1)
        defer { executor.stop() }
        let container = Container()
        let attempts = Counter()
        let started = AsyncLatch(count: 1)
        let waiting = AsyncLatch(count: 20)
        container.register(AsyncService.self, reuse: placement.reuse) { () async throws -> AsyncService in
            if attempts.next() == 1 {
                started.arrive()
                await waiting.wait()
            }
            throw Boom()
        }
        let scope = placement.scope(in: container)
        let creator = Task(executorPreference: executor) { try await scope.require(AsyncService.self) }
        await started.wait()
        let waiters = (0..<20).map { _ in
            Task(executorPreference: executor) { () async throws -> AsyncService in
                // The last arrival wakes the factory, which runs once this task has suspended in the resolve.
                waiting.arrive()
                return try await scope.require(AsyncService.self)
            }
        }
        let failure = await #expect(throws: ResolutionError.self) { try await creator.value }
        #expect(failure?.code == .factoryFailed)
        var shared = 0
        for waiter in waiters {
            do {
                _ = try await waiter.value
            } catch let error as ResolutionError where error.code == .factoryFailed && error.underlyingError is Boom {
                shared += 1
            }
        }
        #expect(attempts.value == 1, "the waiters do not run the factory again")
        #expect(shared == 20)
        await #expect(throws: ResolutionError.self) { try await scope.require(AsyncService.self) }
        #expect(attempts.value == 2, "the next resolve tries again, once")
    }

    @Test("await resolves of an instance a plain thread is making suspend: their threads run other work meanwhile")
    func awaitingASynchronousCreationBlocksNoThread() async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) else { return }
        // Two threads, as the cooperative pool of a two-core machine: two blocked waiters would stop all its work.
        let executor = ThreadPoolExecutor(threads: 2)
        defer { executor.stop() }
        let container = Container(waitLimit: .seconds(30))
        let made = Counter()
        let entered = Signal()
        let finish = Signal()
        container.register(Foo.self, reuse: .singleton) { () -> Foo in
            made.increment()
            entered.fire()
            finish.wait(seconds: 30)
            return Foo()
        }
        let created = Shared<Foo?>(nil)
        detach { created.value = try? container.require(Foo.self) }
        #expect(entered.wait())
        let waiters = (0..<8).map { _ in
            Task(executorPreference: executor) { try await container.require(Foo.self) }
        }
        let unrelated = Task(executorPreference: executor) { 42 }
        let ran = await value(of: unrelated, within: 5)
        finish.fire()
        #expect(ran == 42, "the executor's threads are free while the resolves wait")
        var instances: [Foo] = []
        for waiter in waiters { instances.append(try await waiter.value) }
        #expect(made.value == 1)
        #expect(instances.allSatisfy { $0 === instances[0] })
        #expect(try await container.require(Foo.self) === instances[0])
    }

    @Test("an async .graph service resolved by child tasks of one outermost resolve is made once for them all")
    func graphSharedByChildTasks() async throws {
        let container = Container()
        let made = Counter()
        container.register(Foo.self, reuse: .graph) { () async throws -> Foo in
            made.increment()
            try await Task.sleep(nanoseconds: 2_000_000)  // the other children arrive meanwhile
            return Foo()
        }
        let shared = Counter()
        container.register(Person.self) { (scope: Scope) async throws -> Person in
            let foos = try await withThrowingTaskGroup(of: Foo.self) { group in
                for _ in 0..<4 { group.addTask { try await scope.require(Foo.self) } }
                return try await group.reduce(into: [Foo]()) { $0.append($1) }
            }
            if foos.allSatisfy({ $0 === foos[0] }) { shared.increment() }
            return Person("graph", "children")
        }
        for _ in 0..<50 { _ = try await container.require(Person.self) }
        #expect(made.value == 50, "one per outermost resolve")
        #expect(shared.value == 50)
    }

    @Test(
        "a cancelled creator's CancellationError reaches it; the next resolver makes the instance",
        arguments: AsyncPlacement.allCases)
    func cancelledCreatorRetries(_ placement: AsyncPlacement) async throws {
        let container = Container()
        let started = AsyncGate()
        let attempts = AsyncCounter()
        container.register(AsyncService.self, reuse: placement.reuse) {
            let attempt = await attempts.increment()
            if attempt == 1 {
                await started.open()
                try await Task.sleep(nanoseconds: 10_000_000_000)
            }
            return AsyncService(serial: attempt)
        }
        let scope = placement.scope(in: container)
        let creator = Task { try await scope.require(AsyncService.self) }
        await started.wait()
        creator.cancel()
        await #expect(throws: CancellationError.self) { try await creator.value }
        #expect(try await scope.require(AsyncService.self).serial == 2)
    }

    @Test("a request scope's creator cancelled while others await: one of them makes the instance, once")
    func requestScopeCreatorCancelledWhileOthersAwait() async throws {
        let container = Container()
        let started = AsyncGate()
        let attempts = AsyncCounter()
        container.register(AsyncService.self, reuse: .inScope) {
            let attempt = await attempts.increment()
            if attempt == 1 {
                await started.open()
                try await Task.sleep(nanoseconds: 10_000_000_000)
            }
            return AsyncService(serial: attempt)
        }
        let request = container.openScope()
        let creator = Task { try await request.require(AsyncService.self) }
        await started.wait()
        let waiters = (0..<20).map { _ in Task { try await request.require(AsyncService.self) } }
        try await Task.sleep(nanoseconds: 10_000_000)
        creator.cancel()
        await #expect(throws: CancellationError.self) { try await creator.value }
        for waiter in waiters { #expect(try await waiter.value.serial == 2) }
        #expect(await attempts.value == 2)
    }

    @Test("a request scope's async instance, made by an await, resolves by the locked path as it is, and below its owner")
    func keptAsyncInstanceServedByTheLockedPath() async throws {
        let container = Container()
        let made = Counter()
        container.register(AsyncService.self, reuse: .inScope) { () async in AsyncService(serial: made.next()) }
        container.register(DisposableAsync.self, reuse: .scopedTo("session")) { () async in
            DisposableAsync(log: EventLog())
        }
        let request = container.openScope()
        let instance = try await request.require(AsyncService.self)
        // A `.scopedTo` instance, made in its owner (kept in its table), then resolved from below it: by an `await`,
        // whose claim finds it kept there, and synchronously.
        let session = container.openScope("session")
        let owned = try await session.require(DisposableAsync.self)
        let below = session.openScope()
        let belowAgain = session.openScope()
        #expect(try await below.require(DisposableAsync.self) === owned)
        #expect(try belowAgain.requireSynchronously(DisposableAsync.self) === owned)
        // While dependencies are recorded, every resolve takes the locked path.
        container.recordsDependencies = true
        #expect(try request.requireSynchronously(AsyncService.self) === instance)
        #expect(try await request.require(AsyncService.self) === instance)
        #expect(made.value == 1)
        let third = session.openScope()
        #expect(try await third.require(DisposableAsync.self) === owned)
        #expect(try third.requireSynchronously(DisposableAsync.self) === owned)
        #expect(request.report().instances.map(\.service.description) == ["AsyncService"])
        #expect(session.report().instances.map(\.service.description) == ["DisposableAsync"])
    }

    @Test("100 tasks awaiting a request scope's async instance: one creation; a synchronous resolve meanwhile says to await it")
    func requestScopeInstanceAwaitedByManyTasks() async throws {
        let container = Container()
        let log = EventLog()
        let started = AsyncGate()
        let release = AsyncGate()
        let attempts = AsyncCounter()
        container.register(DisposableAsync.self, reuse: .inScope) {
            if await attempts.increment() == 1 {
                await started.open()
                await release.wait()
            }
            return DisposableAsync(log: log)
        }
        let request = container.openScope()
        let creator = Task { try await request.require(DisposableAsync.self) }
        await started.wait()
        // While the creator's mark is in the scope's table: a synchronous resolve refuses to wait for it.
        let refused = #expect(throws: ResolutionError.self) { try request.requireSynchronously(DisposableAsync.self) }
        #expect(refused?.code == .requiresAwait)
        let waiters = (0..<100).map { _ in Task { try await request.require(DisposableAsync.self) } }
        try await Task.sleep(nanoseconds: 10_000_000)
        await release.open()
        let made = try await creator.value
        for waiter in waiters { #expect(try await waiter.value === made) }
        #expect(try request.requireSynchronously(DisposableAsync.self) === made)
        #expect(await attempts.value == 1)
        // Another request scope makes its own.
        let other = container.openScope()
        #expect(try await other.require(DisposableAsync.self) !== made)
        await request.dispose()
        #expect(log.events == ["disposed"], "disposed once, with its scope")
        await other.dispose()
        #expect(log.events == ["disposed", "disposed"])
    }

    @Test("a cycle of async factories is found with its path")
    func cycleInOneTask() async throws {
        let container = Container()
        container.register(AsyncService.self, reuse: .singleton) { (scope: Scope) async throws in
            _ = try await scope.require(Foo.self)
            return AsyncService(serial: 1)
        }
        container.register(Foo.self) { (scope: Scope) async throws in
            _ = try await scope.require(AsyncService.self)
            return Foo()
        }
        let error = await #expect(throws: ResolutionError.self) { try await container.require(AsyncService.self) }
        #expect(error?.code == .dependencyCycle)
        #expect(error?.pathDescription == "AsyncService → Foo → AsyncService")
    }

    @Test(
        "a cycle found as an empty slot is claimed leaves that slot empty: the instance is made there later",
        .timeLimit(.minutes(1)))
    func cycleAtAClaimLeavesTheSlotEmpty() async throws {
        let container = Container()
        let inner = Mutex<Scope?>(nil)
        let cycle = Mutex<ResolutionError?>(nil)
        // Made in "outer", the factory wants the same service in a scope below: another slot, which this chain
        // would make too (a cycle). Made in "inner", it returns at once.
        container.register(AsyncService.self, reuse: .inScope) { (scope: Scope) async throws in
            guard scope.key == AnyHashable("outer") else { return AsyncService(serial: 2) }
            let below = scope.openScope("inner")
            inner.withLock { $0 = below }
            do {
                _ = try await below.require(AsyncService.self)
            } catch let error as ResolutionError {
                cycle.withLock { $0 = error }
            }
            return AsyncService(serial: 1)
        }
        let outer = container.openScope("outer")
        #expect(try await outer.require(AsyncService.self).serial == 1)
        let error = try #require(cycle.withLock { $0 })
        #expect(error.code == .dependencyCycle)
        #expect(error.pathDescription == "AsyncService → AsyncService")
        // The claim threw before marking the inner slot: it is empty, not being made, and an await makes it.
        let below = try #require(inner.withLock { $0 })
        #expect(try await below.require(AsyncService.self).serial == 2)
        await outer.dispose()
    }

    @Test("an async factory, or a decorator of its service, that resolves the service synchronously is a cycle")
    func synchronousSelfResolveInAnAsyncCreationIsACycle() async throws {
        let container = Container()
        container.register(AsyncService.self, reuse: .singleton) { (scope: Scope) async throws in
            _ = try scope.requireSynchronously(AsyncService.self)
            return AsyncService(serial: 1)
        }
        let error = await #expect(throws: ResolutionError.self) { try await container.require(AsyncService.self) }
        #expect(error?.code == .dependencyCycle, "not requiresAwait: awaiting it would wait for itself")
        #expect(error?.pathDescription == "AsyncService → AsyncService")

        let decorated = Container()
        decorated.register(AsyncService.self, reuse: .inScope) { () async in AsyncService(serial: 2) }
        decorated.decorate(AsyncService.self) { scope, inner in
            _ = try scope.requireSynchronously(AsyncService.self)
            return inner
        }
        let request = decorated.openScope()
        let decoratorError = await #expect(throws: ResolutionError.self) { try await request.require(AsyncService.self) }
        #expect(decoratorError?.code == .dependencyCycle)
        #expect(decoratorError?.pathDescription == "AsyncService → AsyncService")
        await request.dispose()
    }

    @Test("a transient async factory that resolves its own service synchronously: a cycle, not requiresAwait")
    func synchronousSelfResolveInAnAsyncTransientIsACycle() async throws {
        let container = Container()
        let runs = Counter()
        container.register(AsyncService.self) { (scope: Scope) async throws in
            runs.increment()
            _ = try scope.requireSynchronously(AsyncService.self)
            return AsyncService(serial: 1)
        }
        // Another async transient, resolved synchronously from the factory: not on the chain, so awaiting it is the fix.
        container.register(Foo.self) { (scope: Scope) async throws in
            _ = try scope.requireSynchronously(AsyncService.self)
            return Foo()
        }
        let error = await #expect(throws: ResolutionError.self) { try await container.require(AsyncService.self) }
        #expect(error?.code == .dependencyCycle, "awaiting it would make it again, forever")
        #expect(error?.pathDescription == "AsyncService → AsyncService")
        #expect(runs.value == 1)
        let other = await #expect(throws: ResolutionError.self) { try await container.require(Foo.self) }
        #expect(other?.code == .requiresAwait)
        #expect(runs.value == 1)

        let decorated = Container()
        decorated.register(AsyncService.self) { () async in AsyncService(serial: 2) }
        decorated.decorate(AsyncService.self) { scope, inner in
            _ = try scope.requireSynchronously(AsyncService.self)
            return inner
        }
        let decoratorError = await #expect(throws: ResolutionError.self) { try await decorated.require(AsyncService.self) }
        #expect(decoratorError?.code == .dependencyCycle)
        #expect(decoratorError?.pathDescription == "AsyncService → AsyncService")
    }

    @Test(
        "a cycle split across two tasks, each awaiting the other's creation, is found instead of hanging",
        arguments: AsyncPlacement.allCases)
    func cycleAcrossTasks(_ placement: AsyncPlacement) async throws {
        let container = Container()
        let aStarted = AsyncGate()
        let bStarted = AsyncGate()
        let rounds = AsyncCounter()
        container.register(AsyncService.self, reuse: placement.reuse) { (scope: Scope) async throws in
            if await rounds.increment() <= 2 {
                await aStarted.open()
                await bStarted.wait()
            }
            _ = try await scope.require(Foo.self)
            return AsyncService(serial: 1)
        }
        container.register(Foo.self, reuse: placement.reuse) { (scope: Scope) async throws in
            if await rounds.increment() <= 2 {
                await bStarted.open()
                await aStarted.wait()
            }
            _ = try await scope.require(AsyncService.self)
            return Foo()
        }
        let scope = placement.scope(in: container)
        let a = Task { _ = try await scope.require(AsyncService.self) }
        let b = Task { _ = try await scope.require(Foo.self) }
        let errors = [await a.result, await b.result].compactMap { result -> ResolutionError? in
            guard case .failure(let error) = result else { return nil }
            return error as? ResolutionError
        }
        #expect(errors.count == 2)
        #expect(errors.allSatisfy { $0.code == .dependencyCycle })
    }

    @Test("a factory whose child tasks wait for two creations: the cycle through the one still awaited is found")
    func cycleThroughOneOfTwoWaits() async throws {
        let container = Container(waitLimit: .seconds(20))
        let xProceeds = AsyncGate()
        let yProceeds = AsyncGate()
        final class X: Sendable {}
        final class Y: Sendable {}
        final class A: Sendable {}
        container.register(X.self, reuse: .singleton) { (scope: Scope) async throws in
            await xProceeds.wait()
            _ = try await scope.require(A.self)
            return X()
        }
        container.register(Y.self, reuse: .singleton) { () async in
            await yProceeds.wait()
            return Y()
        }
        container.register(A.self, reuse: .singleton) { (scope: Scope) async throws in
            async let x = scope.require(X.self)
            async let y = scope.require(Y.self)
            _ = try await (x, y)
            return A()
        }
        // X and Y are being made by tasks of their own; A's two child tasks wait for them.
        let makingX = Task { try await container.require(X.self) }
        let makingY = Task { try await container.require(Y.self) }
        try await Task.sleep(nanoseconds: 50_000_000)
        let makingA = Task { try await container.require(A.self) }
        try await Task.sleep(nanoseconds: 100_000_000)
        // Y is made: A waits for X alone. X's factory then wants A: a cycle, not a wait until the limit.
        await yProceeds.open()
        _ = try await makingY.value
        await xProceeds.open()
        let errors = [await makingX.result.map { _ in () }, await makingA.result.map { _ in () }]
            .compactMap { result -> ResolutionError? in
                guard case .failure(let error) = result else { return nil }
                return error as? ResolutionError
            }
        #expect(errors.count == 2)
        #expect(errors.allSatisfy { $0.code == .dependencyCycle }, "\(errors.map(\.code))")
    }

    @Test("a task that an async factory starts resolves as outside every factory once the factory has returned")
    func taskStartedByAFactory() async throws {
        final class Job: Sendable {}
        final class Poller: Sendable {
            let job: Task<Job, any Error>
            init(job: Task<Job, any Error>) { self.job = job }
        }
        let container = Container()
        let proceed = AsyncGate()
        container.register(Job.self, reuse: .inScope) { () async in Job() }
        container.register(Poller.self, reuse: .singleton) { () async in
            // An unstructured task: it copies the factory's task-local values, and outlives the factory.
            Poller(
                job: Task {
                    await proceed.wait()
                    return try await container.openScope("job").require(Job.self)
                })
        }
        let poller = try await container.require(Poller.self)
        await proceed.open()
        // Not a singleton's captive dependency: the singleton's factory has returned.
        _ = try await poller.job.value
    }

    @Test("a child task that resolves what its parent is making is a cycle, not a deadlock")
    func childTaskCycle() async throws {
        let container = Container()
        container.register(AsyncService.self, reuse: .singleton) { (scope: Scope) async throws in
            async let child = scope.require(AsyncService.self)
            _ = try await child
            return AsyncService(serial: 1)
        }
        let error = await #expect(throws: ResolutionError.self) { try await container.require(AsyncService.self) }
        #expect(error?.code == .dependencyCycle)
    }

    @Test(
        "a scope disposed while its async instance is made (and awaited by other tasks): scopeDisposed for each, and the instance disposed once",
        arguments: [0, 20])
    func disposedDuringCreation(waiting: Int) async throws {
        let container = Container()
        let log = EventLog()
        let started = AsyncGate()
        let release = AsyncGate()
        container.register(DisposableAsync.self, reuse: .inScope) {
            await started.open()
            await release.wait()
            return DisposableAsync(log: log)
        }
        let scope = container.openScope("request")
        let creation = Task { try await scope.require(DisposableAsync.self) }
        await started.wait()
        let waiters = (0..<waiting).map { _ in Task { try await scope.require(DisposableAsync.self) } }
        if waiting > 0 { try await Task.sleep(nanoseconds: 10_000_000) }
        await scope.dispose()
        await release.open()
        for task in [creation] + waiters {
            let error = await #expect(throws: ResolutionError.self) { try await task.value }
            #expect(error?.code == .scopeDisposed)
        }
        #expect(log.events == ["disposed"], "the instance made for the disposed scope, disposed at once")
    }

    @Test("async instances are disposed with their scope; captive dependencies are refused; .graph is shared in one resolve")
    func rules() async throws {
        let container = Container()
        let log = EventLog()
        container.register(DisposableAsync.self, reuse: .inScope) { () async in DisposableAsync(log: log) }
        let scope = container.openScope("request")
        _ = try await scope.require(DisposableAsync.self)
        await scope.dispose()
        #expect(log.events == ["disposed"])

        container.register(Foo.self, reuse: .inScope) { () async in Foo() }
        container.register(AsyncService.self, reuse: .singleton) { (scope: Scope) async throws in
            _ = try await scope.require(Foo.self)
            return AsyncService(serial: 1)
        }
        let captive = await #expect(throws: ResolutionError.self) { try await container.require(AsyncService.self) }
        #expect(captive?.code == .captiveDependency)
        #expect(captive?.pathDescription == "AsyncService → Foo")

        let graph = Container()
        graph.register(Foo.self, reuse: .graph) { () async in Foo() }
        graph.register(Person.self) { (scope: Scope) async throws in
            let a = try await scope.require(Foo.self)
            let b = try await scope.require(Foo.self)
            return Person(a === b ? "shared" : "not shared", "")
        }
        #expect(try await graph.require(Person.self).first == "shared")
    }

    @Test("a scope's registration may be async too")
    func scopeRegistration() async throws {
        let container = Container()
        container.register(AsyncService.self, reuse: .singleton) { () async in AsyncService(serial: 1) }
        let test = container.openScope("test")
        test.register(AsyncService.self, reuse: .singleton) { () async in AsyncService(serial: 2) }
        #expect(try await test.openScope("below").require(AsyncService.self).serial == 2)
        #expect(try await container.require(AsyncService.self).serial == 1)
    }

    @Test(
        "a registration replaced while an await looks for its .scopedTo owner: no slot left marked, the new one after",
        .timeLimit(.minutes(1)))
    func replacedWhileFindingTheScopedToOwner() async throws {
        let gate = KeyGate()
        let tenantKey = GateKey(name: "tenant", gate: gate)
        let container = Container()
        container.register(AsyncService.self, reuse: .scopedTo(tenantKey)) { () async in AsyncService(serial: 1) }
        let tenant = container.openScope(tenantKey)
        let request = tenant.openScope()
        // The await's lock-free lookup finds the instance not made; looking for its owner compares scope keys
        // with the container's lock released, and the gate holds it there while the registration is replaced.
        gate.arm()
        let resolving = Task { try await request.require(AsyncService.self).serial }
        #expect(gate.reached.wait(seconds: Signal.holdLimit))
        container.register(AsyncService.self, reuse: .scopedTo(tenantKey), ifAlreadyRegistered: .replace) {
            () async in AsyncService(serial: 2)
        }
        gate.letGo.fire()
        // Begun before the replace, the await may get either registration's instance (a synchronous resolve racing
        // a replace does too); it gets one, the slot it claimed is settled, and the next resolve sees the new one.
        let first = try await resolving.value
        #expect(first == 1 || first == 2)
        #expect(try await tenant.require(AsyncService.self).serial == 2)
        #expect(try await request.require(AsyncService.self).serial == 2)
        await container.dispose()
    }

    @Test("keyed awaits of async services not made yet, from 100 tasks: one creation per key and scope")
    func keyedAwaitsOfUncreatedAsyncServices() async throws {
        let container = Container()
        let made = Counter()
        container.register(AsyncService.self, reuse: .singleton, key: "pool") { () async in
            await Task.yield()
            return AsyncService(serial: made.next())
        }
        container.register(AsyncService.self, reuse: .inScope, key: 7) { () async in
            await Task.yield()
            return AsyncService(serial: 100 + made.next())
        }
        container.register(AsyncService.self, reuse: .inScope) { () async in AsyncService(serial: 1_000) }
        let request = container.openScope()
        let serials = await withTaskGroup(of: [Int].self) { group in
            for _ in 0..<100 {
                group.addTask {
                    [
                        (try? await container.require(AsyncService.self, key: "pool").serial) ?? -1,
                        (try? await request.require(AsyncService.self, key: 7).serial) ?? -1,
                    ]
                }
            }
            return await group.reduce(into: [[Int]]()) { $0.append($1) }
        }
        #expect(Set(serials.map { $0[0] }).count == 1 && serials[0][0] > 0, "one singleton for the key")
        #expect(Set(serials.map { $0[1] }).count == 1 && serials[0][1] > 100, "one instance in the scope for the key")
        #expect(made.value == 2)
        // Another scope makes its own; an Optional key is its wrapped key; nil is no key; another key is not found.
        let other = container.openScope()
        #expect(try await other.require(AsyncService.self, key: 7).serial == 103)
        #expect(try await request.require(AsyncService.self, key: Int?.some(7)).serial == serials[0][1])
        #expect(try await request.require(AsyncService.self, key: Int?.none).serial == 1_000)
        let missing = await #expect(throws: ResolutionError.self) { try await request.require(AsyncService.self, key: 8) }
        #expect(missing?.code == .notRegistered)
        await other.dispose()
        await request.dispose()
    }

    @Test("an array of services with async factories is made with await, each element awaited")
    func arrayOfAsyncServices() async throws {
        let container = Container()
        let madeSynchronously = Counter()
        container.register(AsyncService.self, key: "sync") { AsyncService(serial: 10 + madeSynchronously.next()) }
        container.register(AsyncService.self, reuse: .singleton) { () async in AsyncService(serial: 1) }
        container.register(AsyncService.self, key: "transient") { () async in AsyncService(serial: 2) }
        let all = try await container.require([AsyncService].self)
        #expect(all.map(\.serial) == [11, 1, 2], "each element made once, in registration order")
        // The singleton is cached: the next array shares it, and makes a new transient.
        let again = try await container.require([AsyncService].self)
        #expect(again[1] === all[1])
        #expect(again[2] !== all[2])
        #expect(madeSynchronously.value == 2)
        // Synchronously, an element that needs an `await` fails as it does alone.
        let error = #expect(throws: ResolutionError.self) { try container.require([AsyncService].self) as [AsyncService] }
        #expect(error?.code == .requiresAwait)
        #expect(error?.requested == ServiceKey(service: AsyncService.self, key: "transient"))
        #expect(error?.fileID == #fileID, "the error names the caller, not the library")
    }

    @Test("an await resolve of an array whose element's async singleton is not made yet makes it, once")
    func arrayOfAnUnmadeAsyncSingleton() async throws {
        let container = Container()
        let made = Counter()
        container.register(AsyncService.self, reuse: .singleton) { () async in AsyncService(serial: made.next()) }
        let all = try await container.require([AsyncService].self)
        #expect(all.map(\.serial) == [1])
        #expect(try await container.require(AsyncService.self) === all[0])
    }

    @Test("an await resolve of an array makes each element once, when an element's resolved callback needs an await")
    func arrayWhoseElementsCallbackAwaits() async throws {
        let container = Container()
        let made = Counter()
        container.register(Foo.self, reuse: .singleton) { () async in Foo() }
        container.register(AsyncService.self, key: "first") { AsyncService(serial: made.next()) }
        container.register(AsyncService.self, reuse: .singleton, key: "second") { AsyncService(serial: made.next()) }
            .resolved { scope, _ in _ = try scope.require(Foo.self) }
        let all = try await container.require([AsyncService].self)
        #expect(all.map(\.serial) == [1, 2], "the transient first element made once")
    }
}

extension Scope {
    /// The synchronous `require`, callable from async code (where Swift picks the async form).
    func requireSynchronously<Service>(_ type: Service.Type) throws(ResolutionError) -> Service {
        try require(Service.self)
    }
}

/// A scope key whose `==`, once armed, fires `reached` and waits for `letGo`, once.
struct GateKey: Hashable, @unchecked Sendable {
    let name: String
    let gate: KeyGate

    static func == (left: Self, right: Self) -> Bool {
        left.gate.pass()
        return left.name == right.name
    }

    func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

/// What holds a ``GateKey`` comparison: armed by the test, it holds the first comparison after that.
final class KeyGate: @unchecked Sendable {  // `isArmed` is guarded by `lock`
    private let lock = TestLock()
    private var isArmed = false
    let reached = Signal()
    let letGo = Signal()

    func arm() { lock.withLock { isArmed = true } }

    func pass() {
        let holds = lock.withLock { () -> Bool in
            defer { isArmed = false }
            return isArmed
        }
        guard holds else { return }
        reached.fire()
        letGo.wait(seconds: Signal.holdLimit)
    }
}

/// Where a test's async instance is cached: a singleton, in the root's slot; or an `.inScope` instance of a
/// request scope, in the scope's table entry, which its creation marks.
enum AsyncPlacement: CaseIterable, Sendable, CustomTestStringConvertible {
    case rootSlot, requestTableEntry

    var reuse: Reuse { self == .rootSlot ? .singleton : .inScope }

    /// The scope the test resolves from: the root, or a new request scope.
    func scope(in container: Container) -> Scope {
        self == .rootSlot ? container.root : container.openScope()
    }

    var testDescription: String { self == .rootSlot ? "a singleton" : "a request scope's .inScope instance" }
}
