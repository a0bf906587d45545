import Testing
import Stimpak

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Misuse that used to crash, hang or hand out a disposed instance: each ends in an error value now.
@Suite struct ReliabilityTests {
    // MARK: A `resolved` callback during which the scope is disposed

    @Test func callbackThatDisposesItsScopeGetsScopeDisposedNotADisposedInstance() {
        let log = EventLog()
        let container = Container()
        container.register(Tracked.self, { () -> Tracked in Tracked("t", log: log) }, reuse: .inScope)
            .resolved { scope, _ in scope.dispose() }
        let scope = container.openScope("screen")
        let error = #expect(throws: ResolutionError.self) { try scope.require(Tracked.self) }
        #expect(error?.code == .scopeDisposed)
        #expect(log.events == ["dispose t"], "the instance was disposed once, with its scope")
    }

    @Test func callbackDuringWhichAnotherThreadDisposesTheScopeGetsScopeDisposed() {
        let log = EventLog()
        let container = Container()
        let callbackRuns = Signal()
        let disposed = Signal()
        container.register(Tracked.self, { () -> Tracked in Tracked("t", log: log) }, reuse: .inScope)
            .resolved { _, _ in
                callbackRuns.fire()
                disposed.wait()
            }
        let scope = container.openScope("screen")
        let outcome = Shared<ResolutionError?>(nil)
        hammer(threads: 2) { index in
            if index == 0 {
                do {
                    _ = try scope.require(Tracked.self)
                } catch {
                    outcome.value = error as? ResolutionError
                }
            } else {
                callbackRuns.wait()
                scope.dispose()
                disposed.fire()
            }
        }
        #expect(outcome.value?.code == .scopeDisposed)
        #expect(log.events == ["dispose t"])
    }

    // MARK: A registration outlives its running factories, and no longer

    final class Weak<Object: AnyObject>: @unchecked Sendable {  // set once, before it is shared
        weak var object: Object?
        init(_ object: Object?) { self.object = object }
    }

    @Test func registrationUnregisteredWhileItsFactoryRunsOnAnotherThreadIsFreedAfterwards() {
        let container = Container()
        let factoryRuns = Signal()
        let unregistered = Signal()
        let captured = Canary()
        let blocks = Shared(false)
        let registration = Weak(
            container.register(Canary.self) { () -> Canary in
                guard blocks.value else { return Canary() }
                factoryRuns.fire()
                unregistered.wait()
                // The closure's context (and `captured`) belong to the registration: still alive here.
                #expect(captured.word == Canary.alive)
                return Canary()
            })
        let capturedWeakly = Weak(captured)
        // The first resolve publishes the lookup table, so that the next one takes the lock-free route, on
        // which nothing but the thread's resolution path holds the registration.
        #expect(container.resolve(Canary.self) != nil)
        blocks.value = true
        hammer(threads: 2) { index in
            if index == 0 {
                #expect(container.resolve(Canary.self) != nil)
            } else {
                factoryRuns.wait()
                container.unregister(Canary.self)
                #expect(registration.object != nil, "kept while its factory runs")
                unregistered.fire()
            }
        }
        // Reclaiming releases what the unregistration kept while its factory ran.
        Container.reclaim()
        #expect(registration.object == nil)
        _ = consume captured
        #expect(capturedWeakly.object == nil)
    }

    @Test func factoryThatUnregistersItsOwnRegistrationFinishes() {
        let container = Container()
        let unregisters = Shared(false)
        let registration = Weak(
            container.register(Canary.self) { () -> Canary in
                if unregisters.value { container.unregister(Canary.self) }
                return Canary()
            })
        #expect(container.resolve(Canary.self) != nil)
        unregisters.value = true
        #expect(container.resolve(Canary.self) != nil)
        #expect(container.resolve(Canary.self) == nil, "it is gone")
        Container.reclaim()
        #expect(registration.object == nil)
    }

    // MARK: A wait for another thread's creation is bounded

    @Test func factoryBlockedOnWorkThatResolvesItTimesOutWithTheService() {
        let container = Container(waitLimit: .milliseconds(200))
        let failure = Shared<ResolutionError?>(nil)
        container.register(Foo.self, reuse: .singleton) { (scope: Scope) -> Foo in
            // Hands work to another thread and blocks until it is done, as a `DispatchQueue.sync` would; that
            // work needs the instance being made.
            let done = Signal()
            detach {
                do {
                    _ = try scope.require(Foo.self)
                } catch {
                    failure.value = error as? ResolutionError
                }
                done.fire()
            }
            _ = done.wait(seconds: 10)
            return Foo()
        }
        #expect(container.resolve(Foo.self) != nil, "the creation itself goes on")
        let error = failure.value
        #expect(error?.code == .waitTimedOut)
        #expect(error?.requested == ServiceKey(service: Foo.self))
        #expect(error?.waitLimit == .milliseconds(200))
        let message = error?.description ?? ""
        #expect(message.contains("Foo"))
        #expect(message.contains("Container(waitLimit:)"))
        #expect(message.contains("still running its factory"))
    }

    @Test func anAsyncWaitOnACreationThatAwaitsItTimesOutWithBothServices() async throws {
        final class Consumer: Sendable {}
        let container = Container(waitLimit: .milliseconds(200))
        let failure = Shared<ResolutionError?>(nil)
        container.register(Consumer.self) { (scope: Scope) async throws -> Consumer in
            _ = try await scope.require(AsyncService.self)
            return Consumer()
        }
        container.register(AsyncService.self, reuse: .singleton) { (scope: Scope) async -> AsyncService in
            // Awaits work that is no part of this resolution (a detached task) and that needs the instance
            // being made: Stimpak cannot see the cycle, only the limit ends the wait.
            let work = Task.detached { () async -> ResolutionError? in
                do {
                    _ = try await scope.require(Consumer.self)
                    return nil
                } catch {
                    return error as? ResolutionError
                }
            }
            // Bounded here too, so that an unbounded wait fails the test instead of hanging it; generously: the
            // suite's synchronous tests may hold the cooperative pool's threads for tens of seconds, and the
            // detached task's 200 ms wait ends only once it runs again.
            failure.value = await value(of: work, within: 120) ?? nil
            return AsyncService(serial: 1)
        }
        #expect(try await container.require(AsyncService.self).serial == 1, "the creation itself goes on")
        let error = try #require(failure.value)
        #expect(error.code == .waitTimedOut)
        #expect(error.requested == ServiceKey(service: AsyncService.self))
        #expect(error.waitLimit == .milliseconds(200))
        #expect(error.pathDescription == "Consumer → AsyncService", "the waiting service, then the creation waited for")
        #expect(error.description.contains("another task"))
        #expect(error.description.contains("Container(waitLimit:)"))
    }

    @Test func unlimitedWaitStillWaitsForASlowCreation() {
        let container = Container(waitLimit: .unlimited)
        #expect(container.waitLimit == .unlimited)
        container.register(Foo.self, reuse: .singleton) { () -> Foo in
            usleep(300_000)
            return Foo()
        }
        let results = ResultBox(count: 2)
        hammer(threads: 2) { index in results.set(index, container.resolve(Foo.self)) }
        #expect(results.allSame)
    }

    @Test func defaultWaitLimitIsAMinute() {
        #expect(Container().waitLimit == .seconds(60))
        #expect(WaitLimit.milliseconds(1_500).description == "1.5 s")
        #expect(WaitLimit.default.description == "60 s")
        #expect(WaitLimit.milliseconds(200).description == "200 ms")
        #expect(WaitLimit.unlimited.description == "unlimited")
    }

    // MARK: A comparator that resolves its own registration

    @Test func comparatorResolvingItsOwnRegistrationIsACycleNotAStackOverflow() {
        let container = Container()
        let inner = Shared<ResolutionError?>(nil)
        container.register(Person.self, reuse: .inScope) { (first: String, last: String) -> Person in
            Person(first, last)
        }
        .compareArgsBy { left, right in
            do {
                _ = try container.require(Person.self, ("x", "y"))
            } catch {
                inner.value = error as? ResolutionError
            }
            return left == right
        }
        let first = container.resolve(Person.self, ("a", "b"))
        let second = container.resolve(Person.self, ("c", "d"))
        #expect(first != nil && second != nil && first !== second)
        #expect(inner.value?.code == .dependencyCycle)
    }

    // MARK: A `.weak` instance that died, found by the lock-free path

    /// How a test reaches a `.weak` registration: its service type (a class, or a protocol the class
    /// conforms to), and its key (none, typed, or held as `AnyHashable`).
    enum WeakForm: String, CaseIterable, Sendable, CustomStringConvertible {
        case classType, protocolType, typedKey, anyHashableKey
        var description: String { rawValue }

        func register(_ container: Container, counting made: Counter) {
            switch self {
            case .classType:
                container.register(
                    Foo.self,
                    { () -> Foo in
                        made.increment(); return Foo()
                    }, reuse: .weak)
            case .protocolType:
                container.register(
                    (any Speaker).self,
                    { () -> any Speaker in
                        made.increment(); return Loud()
                    }, reuse: .weak)
            case .typedKey, .anyHashableKey:
                container.register(
                    Foo.self,
                    { () -> Foo in
                        made.increment(); return Foo()
                    }, reuse: .weak, key: "k")
            }
        }

        /// One closure per form, on a concrete `Scope`, so that the optimizer specializes each resolve for
        /// its service type: resolves through `any Resolving` here were left generic, and the generic cast
        /// handles a nil that the specialized one did not.
        var resolve: (Scope) -> AnyObject? {
            switch self {
            case .classType: { $0.resolve(Foo.self) }
            case .protocolType: { $0.resolve((any Speaker).self) }
            case .typedKey: { $0.resolve(Foo.self, key: "k") }
            case .anyHashableKey: { $0.resolve(Foo.self, key: AnyHashable("k")) }
            }
        }
    }

    /// The published box of a `.weak` registration outlives its instance: the next resolve loads a nil
    /// weak reference on the lock-free path (where a release build once cast that nil and crashed) and
    /// must make a new instance.
    @Test(arguments: WeakForm.allCases)
    func deadWeakInstanceIsMadeAgain(form: WeakForm) throws {
        let container = Container()
        let made = Counter()
        form.register(container, counting: made)
        let resolve = form.resolve
        for scope in [container.resolutionScope, container.openScope("request")] {
            for _ in 0..<3 {
                let before = made.value
                weak var dropped: AnyObject?
                do {
                    let instance = try #require(resolve(scope))
                    // Held: the same instance again, from the published box.
                    #expect(resolve(scope) === instance)
                    dropped = instance
                }
                // Nobody holds it now, so the next round finds the published box's reference nil.
                #expect(dropped == nil)
                #expect(made.value == before + 1, "one instance per round")
            }
        }
    }

    // MARK: The depth guard follows the stack that is left

    // 72 KB leaves 8 KB above the 64 KB reserve, less than 127 nested resolutions take in any build: the guard
    // must stop the chain there. 512 KB holds it.
    @Test(arguments: [72 * 1024, 512 * 1024])
    func deepChainOnASmallStackStopsBeforeTheStackEnds(stackSize: Int) {
        let container = Container()
        let depth = ResolutionError.maximumDepth - 1
        for level in 0..<depth {
            container.register(
                Node.self,
                { (scope: Scope) -> Node in
                    Node(level + 1 < depth ? try scope.require(Node.self, key: level + 1) : nil)
                }, key: level)
        }
        let outcome = Shared<Result<Node, ResolutionError>?>(nil)
        run(stackSize: stackSize) {
            outcome.value = Result { () throws(ResolutionError) in try container.require(Node.self, key: 0) }
        }
        switch outcome.value {
        case .success(let node):
            #expect(node.length == depth)
            #expect(stackSize > 72 * 1024, "127 nested resolutions cannot fit in the 8 KB above a 64 KB reserve")
        case .failure(let error):
            #expect(error.code == .resolutionTooDeep)
            #expect(error.description.contains("stack is nearly used up"))
        case nil:
            Issue.record("the thread did not finish")
        }
    }

    final class Node: Sendable {
        let next: Node?
        init(_ next: Node?) { self.next = next }
        var length: Int {
            var count = 1
            var node = next
            while let current = node {
                count += 1
                node = current.next
            }
            return count
        }
    }

    /// Runs `body` on a new thread with a stack of `stackSize` bytes and waits for it.
    func run(stackSize: Int, _ body: @escaping @Sendable () -> Void) {
        final class Box: @unchecked Sendable {
            let run: () -> Void
            init(_ run: @escaping () -> Void) { self.run = run }
        }
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        #expect(pthread_attr_setstacksize(&attributes, stackSize) == 0)
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        #if canImport(Glibc)
        let err = pthread_create(
            &thread, &attributes,
            { raw in
                Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().run()
                return nil
            }, context)
        #else
        let err = pthread_create(
            &thread, &attributes,
            { raw in
                Unmanaged<Box>.fromOpaque(raw).takeRetainedValue().run()
                return nil
            }, context)
        #endif
        #expect(err == 0)
        pthread_join(thread, nil)
    }
}

// MARK: Deinits of what a container releases run with its lock released

/// Resolves from its container when it is released, then fires `released`.
final class ResolvesOnDeinit: ResolutionObserver, @unchecked Sendable {  // `container` is set once, in `init`
    weak var container: Container?
    let released: Signal?
    init(_ container: Container, released: Signal? = nil) {
        self.container = container
        self.released = released
    }
    deinit {
        _ = container?.resolve(Foo.self)
        released?.fire()
    }
}

/// Whether `body`, run on a thread of its own, returns within `seconds`: a deadlock fails the test instead of
/// hanging the suite (the blocked thread is left behind).
func returnsPromptly(within seconds: Double = 10, _ body: @escaping @Sendable () -> Void) -> Bool {
    let returned = Signal()
    detach {
        body()
        returned.fire()
    }
    return returned.wait(seconds: seconds)
}

@Suite struct ReleaseOutsideTheLockTests {
    /// Every kind of value a container stores under its lock and then replaces or removes.
    enum Replaced: CaseIterable, Sendable {
        case rootValue, childValue, childValueByRegistration, childRegistrationByValue, rootRegistration,
            unregistered, childUnregistered, observer, observerRemoved
    }

    /// A registration of `ResolvesOnDeinit` whose factory alone holds `held`.
    static func register(holding held: ResolvesOnDeinit, in scope: some Resolving, replacing: Bool = false) {
        if replacing {
            scope.register(ResolvesOnDeinit.self, ifAlreadyRegistered: .replace) { held }
        } else {
            scope.register(ResolvesOnDeinit.self) { held }
        }
    }

    static func replace(_ kind: Replaced, in container: Container, released: Signal) {
        let child = container.openScope("child")
        switch kind {
        case .rootValue:
            container.root.provide(ResolvesOnDeinit(container, released: released))
            container.root.provide(ResolvesOnDeinit(container))
        case .childValue:
            // The scope's table keeps its first value for lock-free readers; the second is the scope's only.
            child.provide(ResolvesOnDeinit(container))
            child.provide(ResolvesOnDeinit(container, released: released))
            child.provide(ResolvesOnDeinit(container))
        case .childValueByRegistration:
            child.provide(ResolvesOnDeinit(container))
            child.provide(ResolvesOnDeinit(container, released: released))
            register(holding: ResolvesOnDeinit(container), in: child)
        case .childRegistrationByValue:
            register(holding: ResolvesOnDeinit(container, released: released), in: child)
            child.provide(ResolvesOnDeinit(container))
        case .rootRegistration:
            register(holding: ResolvesOnDeinit(container, released: released), in: container)
            register(holding: ResolvesOnDeinit(container), in: container, replacing: true)
        case .unregistered:
            register(holding: ResolvesOnDeinit(container, released: released), in: container)
            _ = container.unregister(ResolvesOnDeinit.self)
        case .childUnregistered:
            register(holding: ResolvesOnDeinit(container, released: released), in: child)
            _ = child.unregister(ResolvesOnDeinit.self)
        case .observer:
            container.observer = ResolvesOnDeinit(container, released: released)
            container.observer = ResolvesOnDeinit(container)
        case .observerRemoved:
            container.observer = ResolvesOnDeinit(container, released: released)
            container.observer = nil
        }
    }

    @Test(
        "a deinit that resolves from the container, of anything it replaces or removes, runs with no lock held",
        arguments: Replaced.allCases)
    func deinitOfReplacedValueResolves(_ kind: Replaced) {
        let container = Container()
        container.register(Foo.self) { Foo() }
        let released = Signal()
        let returned = returnsPromptly { Self.replace(kind, in: container, released: released) }
        #expect(returned, "no deadlock")
        // A deadlocked release holds what `reclaim()` would wait for.
        guard returned else { return }
        Container.reclaim()
        #expect(released.wait(), "the replaced value was released, and its deinit resolved")
    }
}

protocol Speaker: AnyObject, Sendable {}
final class Loud: Speaker {}
