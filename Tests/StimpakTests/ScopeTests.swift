import Testing
import Stimpak

@Suite struct ScopeTests {
    @Test func openingAnOpenKeyReturnsThatScope() {
        let container = Container()
        let a = container.openScope("a")
        #expect(container.openScope("a") === a)
        #expect(a.openScope(1) === a.openScope(1))
        #expect(a.openScope(1) !== container.openScope(1))
        #expect(a.parent === container.root)
        #expect(a.openScope(1).root === container.root)
        #expect(a.key == AnyHashable("a"))
    }

    @Test("a key opens the same child whatever its static type, as AnyHashable compares keys")
    func keysCompareAsAnyHashable() throws {
        let container = Container()
        let request = container.openScope(3)
        #expect(container.openScopeCount == 1)
        #expect(container.openScope(AnyHashable(3)) === request)
        #expect(container.openScope(Int8(3)) === request)  // equal as AnyHashable
        #expect(container.openScope(AnyHashable(UInt64(3))) === request)
        #expect(container[AnyHashable(3)] === request && container[Int8(3)] === request)
        #expect(request.key == AnyHashable(3))
        #expect(container.openScope(3.0) === request)  // AnyHashable equates 3.0 and 3 too
        #expect(container.openScope("3") !== request)  // a String is another key
        let negative = container.openScope(-1)
        #expect(container.openScope(Int8(-1)) === negative && container.openScope(AnyHashable(Int64(-1))) === negative)
        let named = container.openScope("checkout")
        #expect(container.openScope(AnyHashable("checkout")) === named && named.key == AnyHashable("checkout"))
        #expect(container.openScope(Optional("checkout")) !== named)  // as AnyHashable does
        let anonymous = container.openScope()
        let anonymousKey = try #require(anonymous.key)
        #expect(container.openScope(anonymousKey) === anonymous)
        // .scopedTo finds scopes by key and by key type, whatever the key was opened as.
        container.register(Foo.self, reuse: .scopedTo(Int.self)) { Foo() }
        container.register(Person.self, reuse: .scopedTo(AnyHashable("checkout"))) { Person("a", "b") }
        #expect(try request.openScope("step").require(Foo.self) === request.require(Foo.self))
        #expect(try named.openScope(1).require(Person.self) === named.require(Person.self))
        #expect(container.openScope(Int8(4)).resolve(Foo.self) == nil)  // an Int8's type is not Int
    }

    @Test func disposeReleasesTheSubtreeDeepestFirst() {
        let log = EventLog()
        let container = Container()
        container.register(Tracked.self, reuse: .inScope) { (scope: Scope) in Tracked("\(scope.key!)", log: log) }
        let request = container.openScope("request")
        let first = request.openScope("first")
        let inner = first.openScope("inner")
        let second = request.openScope("second")
        for scope in [request, first, inner, second] { _ = scope.resolve(Tracked.self) }

        #expect(request.dispose().isEmpty)
        #expect(log.events == ["dispose second", "dispose inner", "dispose first", "dispose request"])
        for scope in [request, first, inner, second] { #expect(scope.isDisposed) }
        #expect(container["request"] == nil, "detached from its parent")
        #expect(container.openScope("request") !== request, "the key can be opened again")
        #expect(request.dispose().isEmpty, "disposing twice does nothing")
        #expect(log.events.count == 4)
    }

    @Test func disposedScopeResolvesNothingAndOpensNothing() throws {
        let container = Container()
        container.register(Foo.self) { Foo() }
        let scope = container.openScope("gone")
        scope.dispose()
        #expect(scope.resolve(Foo.self) == nil)
        let error = #expect(throws: ResolutionError.self) { try scope.require(Foo.self) }
        #expect(error?.code == .scopeDisposed)
        let child = scope.openScope("child")
        #expect(child.isDisposed)
        #expect(scope["child"] == nil)
        #expect(child.resolve(Foo.self) == nil)
        #expect(container.resolve(Foo.self) != nil, "the rest of the container is untouched")
    }

    @Test func disposeScopeByKeyAndByScope() {
        let container = Container()
        let a = container.openScope("a")
        let b = container.openScope("b")
        container.disposeScope("a")
        #expect(a.isDisposed)
        #expect(!b.isDisposed)
        container.disposeScope(b)
        #expect(b.isDisposed)
        let otherContainer = Container()
        let other = otherContainer.openScope("b")
        container.disposeScope(other)
        #expect(!other.isDisposed, "a scope of another container is left alone")
        withExtendedLifetime(otherContainer) {}
    }

    @Test func containerDisposeDisposesEverythingInReverseOrderOfCreation() {
        let log = EventLog()
        let container = Container()
        container.register(Tracked.self, reuse: .singleton, key: "s1") { Tracked("s1", log: log) }
        container.register(Tracked.self, reuse: .singleton, key: "s2") { Tracked("s2", log: log) }
        container.register(Tracked.self, reuse: .inScope) { (scope: Scope) in Tracked("in \(scope.key?.description ?? "root")", log: log) }
        _ = container.resolve(Tracked.self, key: "s1")
        _ = container.resolve(Tracked.self)
        _ = container.openScope("child").resolve(Tracked.self)
        _ = container.resolve(Tracked.self, key: "s2")
        container.dispose()
        #expect(log.events == ["dispose in child", "dispose s2", "dispose in root", "dispose s1"])
        #expect(container.resolve(Tracked.self, key: "s1") == nil)
        #expect(container.openScope("late").isDisposed)
    }

    @Test func onDisposeHooksRunAndAFailingOneDoesNotStopTheOthers() {
        let log = EventLog()
        let container = Container()
        container.register(Foo.self, reuse: .inScope, key: 1) { Foo() }.onDispose { _ in log.append("hook 1") }
        container.register(Foo.self, reuse: .inScope, key: 2) { Foo() }.onDispose { _ in throw Boom() }
        container.register(Foo.self, reuse: .inScope, key: 3) { Foo() }.onDispose { _ in log.append("hook 3") }
        let scope = container.openScope("s")
        for key in 1...3 { _ = scope.resolve(Foo.self, key: key) }
        let failures = scope.dispose()
        #expect(log.events == ["hook 3", "hook 1"])
        #expect(failures.count == 1)
        #expect(failures.first?.service.key == AnyHashable(2))
        #expect(failures.first?.description.contains("boom") == true)
    }

    @Test func onDisposeReplacingDisposeReplacesDisposable() {
        let log = EventLog()
        let container = Container()
        container.register(Tracked.self, reuse: .inScope) { Tracked("t", log: log) }
            .onDispose(replacingDispose: true) { tracked in log.append("hook \(tracked.name)") }
        let scope = container.openScope(1)
        _ = scope.resolve(Tracked.self)
        scope.dispose()
        #expect(log.events == ["hook t"])
    }

    @Test func scopeLocalValuesResolveInTheScopeAndBelowOnly() throws {
        struct Request: Sendable { let id: Int }
        let container = Container()
        container.register(Request.self) { Request(id: 0) }
        let request = container.openScope("request")
        let nested = request.openScope("nested")
        let sibling = container.openScope("sibling")
        request.provide(Request(id: 42))
        request.provide(Request(id: 7), key: "other")

        #expect(try request.require(Request.self).id == 42)
        #expect(try nested.require(Request.self).id == 42, "scopes below see it")
        #expect(try sibling.require(Request.self).id == 0, "elsewhere the registration answers")
        #expect(try container.require(Request.self).id == 0)
        #expect(try nested.require(Request.self, key: "other").id == 7)
        #expect(sibling.resolve(Request.self, key: "other") == nil)
        nested.provide(Request(id: 1))
        #expect(try nested.require(Request.self).id == 1, "the nearest scope wins")
        #expect(try request.require(Request.self).id == 42)
    }

    @Test func scopeLocalValueDependenciesReachInScopeFactories() throws {
        struct Request: Sendable { let id: Int }
        final class Logger: @unchecked Sendable {
            let requestID: Int
            init(requestID: Int) { self.requestID = requestID }
        }
        let container = Container()
        container.register(Logger.self, reuse: .inScope) { scope in Logger(requestID: try scope.require(Request.self).id) }
        let request = container.openScope(5)
        request.provide(Request(id: 5))
        #expect(try request.require(Logger.self).requestID == 5)
        let error = #expect(throws: ResolutionError.self) { try container.require(Logger.self) }
        #expect(error?.code == .notRegistered)
    }

    @Test func deepScopeTreesDisposeWithoutRecursion() {
        let container = Container()
        var scope = container.openScope(0)
        let top = scope
        for depth in 1...20_000 { scope = scope.openScope(depth) }
        top.dispose()
        #expect(scope.isDisposed)
    }

    @Test func releasingTheContainerDisposesIt() {
        let log = EventLog()
        var container: Container? = Container()
        container?.register(Tracked.self, reuse: .singleton) { Tracked("single", log: log) }
        _ = container?.resolve(Tracked.self)
        container = nil
        #expect(log.events == ["dispose single"])
    }

    /// A key whose every value has the same hash, so that open scopes share one bucket of their parent.
    struct CollidingKey: Hashable {
        let id: Int
        func hash(into hasher: inout Hasher) { hasher.combine(0) }
    }

    @Test func manyChildrenAreFoundCountedAndDetachedWhateverTheirHashes() {
        let container = Container()
        let scopes = (0..<1_000).map { container.openScope($0) }
        let colliding = (0..<300).map { container.openScope(CollidingKey(id: $0)) }
        #expect(container.openScopeCount == 1_300)
        for (id, scope) in scopes.enumerated() { #expect(container[id] === scope) }
        for (id, scope) in colliding.enumerated() { #expect(container[CollidingKey(id: id)] === scope) }
        for (id, scope) in scopes.enumerated() where id % 2 == 0 { scope.dispose() }
        for (id, scope) in colliding.enumerated() where id % 3 != 0 { scope.dispose() }
        #expect(container.openScopeCount == 500 + 100)
        for (id, scope) in scopes.enumerated() {
            #expect((container[id] === scope) == (id % 2 == 1))
        }
        for (id, scope) in colliding.enumerated() {
            #expect((container[CollidingKey(id: id)] === scope) == (id % 3 == 0))
        }
        #expect(Set(container.openScopes.map(ObjectIdentifier.init)).count == 600)
        container.dispose()
        #expect(scopes.allSatisfy(\.isDisposed) && colliding.allSatisfy(\.isDisposed))
    }

    @Test func scopesWhoseKeysCollideAreFoundAndDetachedOneByOne() {
        let container = Container()
        let scopes = (0..<5).map { container.openScope(CollidingKey(id: $0)) }
        for (id, scope) in scopes.enumerated() {
            #expect(container[CollidingKey(id: id)] === scope)
            #expect(container.openScope(CollidingKey(id: id)) === scope, "opening an open key returns it")
        }
        scopes[2].dispose()
        scopes[4].dispose()
        scopes[0].dispose()
        #expect(container[CollidingKey(id: 0)] == nil)
        #expect(container[CollidingKey(id: 2)] == nil)
        #expect(container[CollidingKey(id: 4)] == nil)
        #expect(container[CollidingKey(id: 1)] === scopes[1])
        #expect(container[CollidingKey(id: 3)] === scopes[3])
        let reopened = container.openScope(CollidingKey(id: 2))
        #expect(reopened !== scopes[2] && !reopened.isDisposed)
        container.dispose()
        #expect(scopes[1].isDisposed && scopes[3].isDisposed && reopened.isDisposed)
    }

    @Test("a parent finds, detaches and releases its children while their table grows and empties")
    func manyChildrenAreFoundAndDetachedInAnyOrder() {
        weak var weakFirst: Scope?
        do {
            let container = Container()
            // Enough children to grow the parent's table several times, with colliding keys among them.
            let ids = Array(0..<300)
            var scopes = [Int: Scope]()
            for id in ids { scopes[id] = id % 10 == 0 ? container.openScope(CollidingKey(id: id)) : container.openScope(id) }
            weakFirst = scopes[0]
            func key(_ id: Int) -> AnyHashable { id % 10 == 0 ? AnyHashable(CollidingKey(id: id)) : AnyHashable(id) }
            #expect(container.openScopeCount == 300)
            for id in ids { #expect(container[key(id)] === scopes[id]) }
            // Every third child, in a scrambled order.
            let disposed = ids.filter { $0 % 3 == 0 }.sorted { ($0 * 7919) % 300 < ($1 * 7919) % 300 }
            for id in disposed { scopes[id]!.dispose() }
            #expect(container.openScopeCount == 200)
            for id in ids {
                if id % 3 == 0 {
                    #expect(container[key(id)] == nil && scopes[id]!.isDisposed)
                } else {
                    #expect(container[key(id)] === scopes[id] && !scopes[id]!.isDisposed)
                }
            }
            let reopened = container.openScope(3)
            #expect(reopened !== scopes[3] && container[3] === reopened)
            container.dispose()
            #expect(container.openScopeCount == 0 && reopened.isDisposed)
            #expect(ids.allSatisfy { scopes[$0]!.isDisposed })
        }
        Container.reclaim()
        #expect(weakFirst == nil, "a disposed child is released with the container")
    }

    @Test func instancesOfAProtocolServiceAreDisposedByTheirOwnType() {
        final class Plain: Plugin, @unchecked Sendable {}
        final class Closing: Plugin, Disposable, @unchecked Sendable {
            let log: EventLog
            init(log: EventLog) { self.log = log }
            func dispose() throws { log.append("dispose") }
        }
        let log = EventLog()
        let made = Counter()
        let container = Container()
        // The dynamic type alternates, so a remembered "not Disposable" must not stick to the next one.
        container.register((any Plugin).self, reuse: .inScope) { () -> any Plugin in
            made.increment()
            return made.value % 2 == 0 ? Closing(log: log) : Plain()
        }
        for round in 0..<6 {
            let scope = container.openScope(round)
            _ = scope.resolve((any Plugin).self)
            scope.dispose()
            #expect(log.count(of: "dispose") == (round + 1) / 2)
        }
    }

    /// The first conforming type a registration meets is disposed through a maker made for it; every other type,
    /// conforming one way, the other or not at all, still by its own conformances.
    @Test func instancesOfManyTypesAreEachDisposedTheirOwnWay() async {
        final class Closing: Disposable, Sendable {
            let log: EventLog
            init(log: EventLog) { self.log = log }
            func dispose() throws { log.append("closing") }
        }
        final class Draining: AsyncDisposable, Sendable {
            let log: EventLog
            init(log: EventLog) { self.log = log }
            func dispose() async throws { log.append("draining") }
        }
        final class Shutting: Disposable, Sendable {
            let log: EventLog
            init(log: EventLog) { self.log = log }
            func dispose() throws { log.append("shutting") }
        }
        final class Plain: Sendable {}
        let log = EventLog()
        let made = Counter()
        let container = Container()
        container.register(Any.self, reuse: .inScope) { () -> Any in
            switch made.next() % 4 {
            case 1: return Closing(log: log)
            case 2: return Draining(log: log)
            case 3: return Shutting(log: log)
            default: return Plain()
            }
        }
        var expected: [String] = []
        for round in 1...12 {
            let scope = container.openScope(round)
            _ = await scope.resolve(Any.self)
            await scope.dispose()
            switch round % 4 {
            case 1: expected.append("closing")
            case 2: expected.append("draining")
            case 3: expected.append("shutting")
            default: break
            }
            #expect(log.events == expected, "round \(round)")
        }
    }

    @Test func anOptionalServiceIsDisposedWhenAnEarlierValueWasNil() {
        let log = EventLog()
        let made = Counter()
        let container = Container()
        // Every value has the type `Tracked?`: a nil must not make the next, a `Tracked`, go undisposed.
        container.register(Tracked?.self, reuse: .inScope) { () -> Tracked? in
            let number = made.next()
            return number % 2 == 0 ? Tracked("t\(number)", log: log) : nil
        }
        for round in 0..<6 {
            let scope = container.openScope(round)
            _ = scope.resolve(Tracked?.self)
            scope.dispose()
            #expect(log.events.count == (round + 1) / 2)
        }
        #expect(log.events == ["dispose t2", "dispose t4", "dispose t6"])
    }

    @Test func anAnyHashableServiceIsDisposedWhenAnEarlierValueWasNotDisposable() {
        final class Handle: Hashable, Disposable, @unchecked Sendable {
            let number: Int
            let log: EventLog
            init(number: Int, log: EventLog) {
                self.number = number
                self.log = log
            }
            static func == (left: Handle, right: Handle) -> Bool { left.number == right.number }
            func hash(into hasher: inout Hasher) { hasher.combine(number) }
            func dispose() throws { log.append("dispose \(number)") }
        }
        let log = EventLog()
        let made = Counter()
        let container = Container()
        // A cast looks inside an `AnyHashable`: an `Int` base says nothing of the next base.
        container.register(AnyHashable.self, reuse: .inScope) { () -> AnyHashable in
            let number = made.next()
            return number % 2 == 0 ? AnyHashable(Handle(number: number, log: log)) : AnyHashable(number)
        }
        for round in 0..<4 {
            let scope = container.openScope(round)
            _ = scope.resolve(AnyHashable.self)
            scope.dispose()
        }
        #expect(log.events == ["dispose 2", "dispose 4"])
    }

    @Test func openingScopesComparesOnlyKeysWithTheSameHash() {
        struct CountedKey: Hashable, Sendable {
            let id: Int
            let comparisons: Counter
            static func == (left: CountedKey, right: CountedKey) -> Bool {
                left.comparisons.increment()
                return left.id == right.id
            }
            func hash(into hasher: inout Hasher) { hasher.combine(id) }
        }
        let comparisons = Counter()
        let container = Container()
        // 200 children share far fewer buckets; a key's `==` (user code, under the container's lock) runs
        // only against a key with its own hash.
        let scopes = (0..<200).map { container.openScope(CountedKey(id: $0, comparisons: comparisons)) }
        #expect(comparisons.value == 0)
        #expect(container.openScope(CountedKey(id: 7, comparisons: comparisons)) === scopes[7])
        #expect(container[CountedKey(id: 150, comparisons: comparisons)] === scopes[150])
        #expect(comparisons.value == 2)
        container.dispose()
        #expect(scopes.allSatisfy { $0.isDisposed })
    }

    @Test func subclassInstancesOfAClassServiceAreDisposedByTheirOwnType() {
        class Handler: @unchecked Sendable {}
        final class ClosingHandler: Handler, Disposable, @unchecked Sendable {
            let log: EventLog
            init(log: EventLog) { self.log = log }
            func dispose() throws { log.append("dispose") }
        }
        let log = EventLog()
        let made = Counter()
        let container = Container()
        // A class service's dynamic type is read from the object: a subclass that conforms is disposed.
        container.register(Handler.self, reuse: .inScope) { () -> Handler in
            made.increment()
            return made.value % 2 == 0 ? ClosingHandler(log: log) : Handler()
        }
        for round in 0..<6 {
            let scope = container.openScope(round)
            _ = scope.resolve(Handler.self)
            scope.dispose()
            #expect(log.count(of: "dispose") == (round + 1) / 2)
        }
    }

    @Test("a scope opened with sharing: .never is its own: openScope(key) and scope[key] find only a shared child")
    func ownScopeIsNeverFoundByKey() throws {
        struct RequestID: Hashable { let value: String }  // a key of the user's type: compared outside the lock
        for key in [AnyHashable("X-Request-ID 7"), AnyHashable(7), AnyHashable(RequestID(value: "7"))] {
            let container = Container()
            let own = container.openScope(key, sharing: .never)
            let other = container.openScope(key, sharing: .never)
            #expect(own !== other, "a colliding key opens another scope")
            #expect(own.key == key && other.key == key)
            #expect(container[key] == nil, "an own scope is not found by its key")
            let shared = container.openScope(key)
            #expect(shared !== own && shared !== other, "find-or-open never returns an own scope")
            #expect(container.openScope(key) === shared && container.openScope(key, sharing: .byKey) === shared)
            #expect(container[key] === shared)
            #expect(container.openScopes.count == 3 && container.openScopes.first === own)
            #expect(container.disposeScope(key).isEmpty)
            #expect(shared.isDisposed && !own.isDisposed && !other.isDisposed, "disposing by key disposes the shared one")
            own.dispose()
            #expect(!other.isDisposed)
            other.dispose()
            #expect(container.openScopeCount == 0)
        }
    }

    @Test("an own scope matches .scopedTo by its key, as a shared one does")
    func ownScopeMatchesScopedTo() throws {
        let container = Container()
        container.register(Foo.self, reuse: .scopedTo("checkout")) { Foo() }
        let checkout = container.openScope("checkout", sharing: .never)
        #expect(try checkout.openScope().require(Foo.self) === checkout.require(Foo.self))
    }

    @Test(
        "two concurrent requests with the same key get two scopes, each disposed once, neither under the other",
        arguments: [false, true])
    func collidingRequestKeys(withScope: Bool) async throws {
        let log = EventLog()
        let container = Container()
        let made = Counter()
        container.register(Tracked.self, reuse: .inScope) { Tracked("session \(made.next())", log: log) }
        let bothResolved = AsyncLatch(count: 2)
        let firstDisposed = AsyncLatch(count: 1)
        // The first request ends while the second still works in its scope.
        @Sendable func request(isFirst: Bool) async throws -> (Scope, Tracked, Bool) {
            let body: @Sendable (Scope) async throws -> (Scope, Tracked, Bool) = { scope in
                let session = try await scope.require(Tracked.self)
                bothResolved.arrive()
                await bothResolved.wait()
                if !isFirst { await firstDisposed.wait() }
                let again = await scope.resolve(Tracked.self)
                return (scope, session, !scope.isDisposed && again === session)
            }
            let result: (Scope, Tracked, Bool)
            if withScope {
                result = try await container.withScope("X-Request-ID: 1", body)
            } else {
                let scope = container.openScope("X-Request-ID: 1", sharing: .never)
                result = try await body(scope)
                await scope.dispose()
            }
            if isFirst { firstDisposed.arrive() }
            return result
        }
        async let first = request(isFirst: true)
        async let second = request(isFirst: false)
        let (firstScope, firstSession, firstIntact) = try await first
        let (secondScope, secondSession, secondIntact) = try await second
        #expect(firstScope !== secondScope)
        #expect(firstSession !== secondSession)
        #expect(firstIntact && secondIntact, "the first request's disposal left the second's scope and session alone")
        #expect(firstScope.isDisposed && secondScope.isDisposed)
        #expect(log.count(of: "dispose session 1") == 1 && log.count(of: "dispose session 2") == 1)
        #expect(log.events.count == 2)
        #expect(container.openScopeCount == 0)
    }
}

protocol Plugin: AnyObject {}
