import Testing
import Stimpak

/// `.scopedTo(key)` and `.scopedTo(KeyType.self)`: one instance in the nearest matching scope.
@Suite struct ScopedToTests {
    struct SessionID: Hashable, Sendable {
        let value: Int
    }

    @Test func scopesBelowTheKeyedScopeShareItsInstance() throws {
        let container = Container()
        container.register(Foo.self, reuse: .scopedTo("checkout")) { Foo() }
        let checkout = container.openScope("checkout")
        let step = checkout.openScope(1)
        let substep = step.openScope("a")
        let instance = try checkout.require(Foo.self)
        #expect(try step.require(Foo.self) === instance)
        #expect(try substep.require(Foo.self) === instance)
        #expect(try substep.require(Foo.self) === instance, "found again (lock-free, from the scope's own table)")

        let otherCheckout = container.openScope("other").openScope("checkout")
        #expect(try otherCheckout.require(Foo.self) !== instance, "another scope with the key has its own")
    }

    @Test func keyTypeMatchesTheNearestScopeWhoseKeyHasThatType() throws {
        let container = Container()
        container.register(Person.self, reuse: .scopedTo(SessionID.self)) { (scope: Scope) -> Person in
            // The factory receives the session scope.
            Person("session", "\(scope.key.map { "\($0.base)" } ?? "root")")
        }
        let alice = container.openScope(SessionID(value: 1))
        let bob = container.openScope(SessionID(value: 2))
        let aliceRequests = (0..<3).map { alice.openScope($0) }
        let bobRequest = bob.openScope(0)
        let aliceUser = try aliceRequests[0].require(Person.self)
        #expect(aliceUser.last == "SessionID(value: 1)")
        for request in aliceRequests { #expect(try request.require(Person.self) === aliceUser) }
        #expect(try bobRequest.require(Person.self) !== aliceUser)
        #expect(try bob.require(Person.self).last == "SessionID(value: 2)")
    }

    @Test func instanceIsDisposedWithItsScopeNotWithTheScopeThatResolvedIt() throws {
        let log = EventLog()
        let container = Container()
        container.register(Tracked.self, { () -> Tracked in Tracked("cart", log: log) }, reuse: .scopedTo("checkout"))
        let checkout = container.openScope("checkout")
        let step = checkout.openScope(1)
        let cart = try step.require(Tracked.self)
        step.dispose()
        #expect(log.events == [])
        #expect(try checkout.openScope(2).require(Tracked.self) === cart)
        checkout.dispose()
        #expect(log.events == ["dispose cart"])
    }

    @Test func noMatchingScopeNamesTheWantedScopeAndTheScopesSearched() {
        let container = Container()
        container.register(Foo.self, reuse: .scopedTo("checkout")) { Foo() }
        let request = container.openScope("session").openScope(7)
        let error = #expect(throws: ResolutionError.self) { try request.require(Foo.self) }
        #expect(error?.code == .noMatchingScope)
        #expect(error?.reuse == .scopedTo("checkout"))
        #expect(error?.searchedScopeKeys == [7, "session", nil])
        let message = error?.description ?? ""
        #expect(message.contains("registered .scopedTo(\"checkout\")"))
        #expect(message.contains("a scope opened with the key \"checkout\""))
        #expect(message.contains("Searched: 7 → \"session\" → root."))
        #expect(message.contains("Fix:"))
        #expect(request.resolve(Foo.self) == nil)
        #expect(container.resolve(Foo.self) == nil)
    }

    @Test func singletonDependingOnAScopedServiceIsTold() {
        let container = Container()
        container.register(Foo.self, reuse: .scopedTo(SessionID.self)) { Foo() }
        container.register(Clock.self, reuse: .singleton) { (scope: Scope) -> Clock in
            _ = try scope.require(Foo.self)
            return Clock()
        }
        let session = container.openScope(SessionID(value: 1))
        let error = #expect(throws: ResolutionError.self) { try session.require(Clock.self) }
        #expect(error?.code == .captiveDependency)
        #expect(error?.pathDescription == "Clock → Foo")

        // Allowed to capture, it still finds no session scope from the root, and is told why.
        let allowed = Container()
        allowed.register(Foo.self, reuse: .scopedTo(SessionID.self)) { Foo() }
        allowed.register(Clock.self, reuse: .singleton) { (scope: Scope) -> Clock in
            _ = try scope.require(Foo.self)
            return Clock()
        }
        .allowCaptiveDependencies()
        let noScope = #expect(throws: ResolutionError.self) { try allowed.openScope(SessionID(value: 1)).require(Clock.self) }
        #expect(noScope?.code == .noMatchingScope)
        #expect(noScope?.description.contains("a key of type SessionID") == true)
        #expect(noScope?.description.contains("singleton's factory resolves from the root") == true)
    }

    @Test func madeExactlyOnceWhenManyScopesBelowAskAtOnce() {
        for round in 0..<20 {
            let made = Counter()
            let container = Container()
            container.register(Foo.self, reuse: .scopedTo(SessionID.self)) { () -> Foo in
                made.increment()
                return Foo()
            }
            let session = container.openScope(SessionID(value: round))
            let requests = (0..<ConcurrencyTests.threads).map { session.openScope($0) }
            let results = ResultBox(count: requests.count)
            hammer(threads: requests.count) { index in
                results.set(index, requests[index].resolve(Foo.self))
            }
            #expect(made.value == 1)
            #expect(results.allSame)
        }
    }

    @Test func reuseDescriptions() {
        #expect(Reuse.scopedTo("checkout").description == ".scopedTo(\"checkout\")")
        #expect(Reuse.scopedTo(SessionID.self).description == ".scopedTo(SessionID.self)")
        #expect(Reuse.scopedTo("a") != Reuse.scopedTo("b"))
        #expect(Reuse.scopedTo(SessionID.self) == Reuse.scopedTo(SessionID.self))
    }
}
