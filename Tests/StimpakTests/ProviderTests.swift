import Testing
import Stimpak

/// `Provider` and `ArgumentProvider` bound to their registration: what a call returns, and that it stays right
/// when the registrations change or the scope is disposed under it.
@Suite struct ProviderTests {
    final class Counted: Sendable {
        let generation: Int
        init(_ generation: Int) { self.generation = generation }
    }

    /// The reuses a provider binds to, and one it does not (`.weak` resolves on each call).
    static let reuses: [Reuse] = [.transient, .singleton, .weak]

    @Test(arguments: reuses)
    func boundProviderReturnsWhatResolveReturns(reuse: Reuse) throws {
        let container = Container()
        container.register(Foo.self, reuse: reuse) { Foo() }
        let makeFoo = container.provider(Foo.self)
        #expect(makeFoo.isBound == (reuse != .weak))
        let first = try makeFoo()
        let second = try makeFoo()
        #expect((first === second) == (reuse != .transient))
        if reuse != .transient { #expect(try container.require(Foo.self) === first) }
    }

    @Test func boundProviderOfAScopedServiceReturnsItsScopesInstance() throws {
        let container = Container()
        container.register(Foo.self, reuse: .inScope) { Foo() }
        let request = container.openScope("request")
        let makeFoo = request.provider(Foo.self)
        #expect(makeFoo.isBound)
        #expect(try makeFoo() === request.require(Foo.self))
        #expect(try makeFoo() === makeFoo())
        // In the root, the captive check runs on each resolve: not bound.
        #expect(!container.provider(Foo.self).isBound)
    }

    @Test(arguments: reuses)
    func providerAfterUnregisterThrowsWhatRequireThrows(reuse: Reuse) throws {
        let container = Container()
        container.register(Foo.self, reuse: reuse) { Foo() }
        let makeFoo = container.provider(Foo.self)
        _ = try makeFoo()
        container.unregister(Foo.self)
        #expect(!makeFoo.isBound)
        let required = #expect(throws: ResolutionError.self) { try container.require(Foo.self) }
        let provided = #expect(throws: ResolutionError.self) { try makeFoo() }
        #expect(provided?.code == .notRegistered)
        #expect(provided?.code == required?.code)
        #expect(provided?.requested == required?.requested)
    }

    @Test(arguments: reuses)
    func providerAfterReplaceResolvesTheNewRegistration(reuse: Reuse) throws {
        let container = Container()
        container.register(Counted.self, reuse: reuse) { Counted(1) }
        let makeCounted = container.provider(Counted.self)
        let before = try makeCounted()
        #expect(before.generation == 1)
        container.register(Counted.self, reuse: reuse, ifAlreadyRegistered: .replace) { Counted(2) }
        let after = try makeCounted()
        #expect(after.generation == 2)
        if reuse == .singleton { #expect(try makeCounted() === container.require(Counted.self)) }
        // A provider made now binds to the new registration.
        let rebound = container.provider(Counted.self)
        #expect(rebound.isBound == (reuse != .weak))
        #expect(try rebound().generation == 2)
    }

    @Test(arguments: [Reuse.transient, .inScope])
    func providerAfterScopeDisposalThrowsWhatRequireThrows(reuse: Reuse) throws {
        let container = Container()
        container.register(Foo.self, reuse: reuse) { Foo() }
        let request = container.openScope("request")
        let makeFoo = request.provider(Foo.self)
        _ = try makeFoo()
        request.dispose()
        #expect(!makeFoo.isBound)
        let required = #expect(throws: ResolutionError.self) { try request.require(Foo.self) }
        let provided = #expect(throws: ResolutionError.self) { try makeFoo() }
        #expect(provided?.code == .scopeDisposed)
        #expect(provided?.code == required?.code)
    }

    @Test func providerOfASingletonAfterContainerDisposalThrows() throws {
        let container = Container()
        container.register(Foo.self, reuse: .singleton) { Foo() }
        let request = container.openScope("request")
        let makeFoo = request.provider(Foo.self)
        _ = try makeFoo()
        container.dispose()
        let provided = #expect(throws: ResolutionError.self) { try makeFoo() }
        #expect(provided?.code == .scopeDisposed)
    }

    @Test func boundProviderDetectsACycle() throws {
        final class Node: Sendable {
            init(_ next: Provider<Node>) throws { _ = try next() }
        }
        let container = Container()
        container.register(Node.self) { scope in try Node(scope.require(Provider<Node>.self)) }
        let makeNode = container.provider(Node.self)
        #expect(makeNode.isBound)
        let error = #expect(throws: ResolutionError.self) { try makeNode() }
        #expect(error?.code == .dependencyCycle)
    }

    /// A thread that has never resolved has no resolution path yet: its first call resolves, which makes the path,
    /// instead of pushing on it, and the calls after it go straight to the registration.
    @Test func boundProviderCalledFirstOnANewThread() throws {
        let container = Container()
        container.register(Foo.self) { Foo() }
        let makeFoo = container.provider(Foo.self)
        let made = EventLog()
        hammer(threads: 1) { _ in
            for _ in 0..<3 where (try? makeFoo()) != nil { made.append("made") }
        }
        #expect(made.count(of: "made") == 3)
        #expect(makeFoo.isBound)
    }

    @Test func boundProviderStopsAtTheMaximumDepth() throws {
        // Each level a registration of its own, so that no cycle stops it first.
        let container = Container()
        let depth = ResolutionError.maximumDepth + 2
        for level in 0..<depth {
            container.register(Foo.self, key: level) { scope in
                if level + 1 < depth { _ = try scope.provider(Foo.self, key: level + 1)() }
                return Foo()
            }
        }
        let error = #expect(throws: ResolutionError.self) { try container.provider(Foo.self, key: 0)() }
        #expect(error?.code == .resolutionTooDeep)
    }

    @Test func factoryFailureThroughABoundProviderNamesTheService() throws {
        struct Refused: Error {}
        let container = Container()
        container.register(Foo.self) { () throws -> Foo in throw Refused() }
        let makeFoo = container.provider(Foo.self)
        #expect(makeFoo.isBound)
        let error = #expect(throws: ResolutionError.self) { try makeFoo() }
        #expect(error?.code == .factoryFailed)
        #expect(error?.requested == ServiceKey(service: Foo.self))
    }

    @Test func argumentProviderPassesItsArguments() throws {
        let container = Container()
        container.register(Person.self) { (first: String, last: String) in Person(first, last) }
        let makePerson = container.provider(Person.self, arguments: (String, String).self)
        #expect(makePerson.isBound)
        let person = try makePerson(("Ada", "Lovelace"))
        #expect(person.first == "Ada" && person.last == "Lovelace")
        container.register(Person.self, ifAlreadyRegistered: .replace) { (first: String, last: String) in
            Person(last, first)
        }
        #expect(!makePerson.isBound)
        #expect(try makePerson(("Ada", "Lovelace")).first == "Lovelace")
        container.unregister(Person.self, arguments: (String, String).self)
        let error = #expect(throws: ResolutionError.self) { try makePerson(("Ada", "Lovelace")) }
        #expect(error?.code == .notRegistered)
    }

    @Test func keyedProviderBindsToItsKeysRegistration() throws {
        let container = Container()
        container.register(Counted.self, key: "one") { Counted(1) }
        container.register(Counted.self, key: "two") { Counted(2) }
        let makeTwo = container.provider(Counted.self, key: "two")
        #expect(makeTwo.isBound)
        #expect(try makeTwo().generation == 2)
    }

    @Test func autowiredProvidersAreBound() throws {
        final class Importer: Sendable {
            let makeFoo: Provider<Foo>
            let makePerson: ArgumentProvider<Person, (String, String)>
            init(makeFoo: Provider<Foo>, makePerson: ArgumentProvider<Person, (String, String)>) {
                self.makeFoo = makeFoo
                self.makePerson = makePerson
            }
        }
        let container = Container()
        container.register(Foo.self) { Foo() }
        container.register(Person.self) { (first: String, last: String) in Person(first, last) }
        let registration = container.autowire(Importer.self, Importer.init)
        #expect(
            registration.dependencies == [
                ServiceKey(service: Foo.self), ServiceKey(service: Person.self, arguments: (String, String).self),
            ])
        let importer = try container.require(Importer.self)
        #expect(importer.makeFoo.isBound && importer.makePerson.isBound)
        #expect(try importer.makeFoo() !== importer.makeFoo())
        #expect(try importer.makePerson(("Grace", "Hopper")).last == "Hopper")
        #expect(container.validate().problems.isEmpty)
    }

    /// A provider keeps no instance of its own: two reused services that reach each other through a provider (the
    /// usual way to break a construction cycle) are released with their scope, a request's with the request, the
    /// container's singletons with the container.
    @Test(arguments: [false, true])
    func servicesThatReachEachOtherThroughAProviderGoWithTheirScope(inRequest: Bool) throws {
        weak var session: ProviderSession?
        weak var cart: ProviderCart?
        var container: Container? = Container()
        let reuse: Reuse = inRequest ? .inScope : .singleton
        container?.autowire(ProviderSession.self, reuse: reuse, ProviderSession.init)
        container?.autowire(ProviderCart.self, reuse: reuse, ProviderCart.init)
        let request = try #require(container?.openScope("request"))
        do {
            let scope: Scope = inRequest ? request : try #require(container?.root)
            let made = try scope.require(ProviderSession.self)
            #expect(made.makeCart.isBound)
            let first = try made.makeCart()
            #expect(try made.makeCart() === first)
            #expect(first.session === made)
            (session, cart) = (made, first)
        }
        #expect(session != nil && cart != nil)
        if inRequest { request.dispose() } else { container = nil }
        Container.reclaim()
        #expect(session == nil, "released with its scope")
        #expect(cart == nil, "released with its scope")
        withExtendedLifetime(container) {}
    }

    /// A provider held past its container's release keeps its own registration (its factory), not the others'.
    @Test func aProviderHeldPastItsContainerKeepsOnlyItsRegistration() throws {
        final class Captured: Sendable {}
        weak var captured: Captured?
        var container: Container? = Container()
        container?.register(Foo.self) { Foo() }
        do {
            let object = Captured()
            captured = object
            container?.register(Person.self) { withExtendedLifetime(object) { Person("a", "b") } }
        }
        let makeFoo = try #require(container?.provider(Foo.self))
        #expect(makeFoo.isBound)
        _ = try makeFoo()
        container = nil
        Container.reclaim()
        #expect(captured == nil, "the other registrations go with the container")
        #expect(!makeFoo.isBound)
        #expect(throws: ResolutionError.self) { try makeFoo() }
    }

    /// A registration taken out of use keeps no instance, whoever still holds it: a singleton and a session that
    /// reach each other through a provider go with their container.
    @Test(arguments: [false, true])
    func aRetiredSingletonReachedThroughAProviderGoesWithTheContainer(replaced: Bool) throws {
        weak var session: ProviderSession?
        weak var cart: ProviderCart?
        var container: Container? = Container()
        container?.autowire(ProviderSession.self, reuse: .singleton, ProviderSession.init)
        container?.autowire(ProviderCart.self, reuse: .singleton, ProviderCart.init)
        do {
            let made = try #require(container).require(ProviderSession.self)
            let first = try made.makeCart()
            #expect(try made.makeCart() === first)
            (session, cart) = (made, first)
        }
        if replaced {
            container?.register(ProviderCart.self, reuse: .singleton, ifAlreadyRegistered: .replace) { r in
                ProviderCart(session: try r.require(ProviderSession.self))
            }
            let replacement = try #require(container).require(ProviderCart.self)
            #expect(replacement !== cart, "the replacement makes its own")
            #expect(try session?.makeCart() === replacement, "the stale provider resolves the replacement")
        } else {
            container?.unregister(ProviderCart.self)
        }
        container = nil
        Container.reclaim()
        #expect(session == nil)
        #expect(cart == nil)
    }

    /// A provider whose table is gone reflects (`dump`, a debugger's `po`) without reading it.
    @Test func aStaleProviderReflects() throws {
        let container = Container()
        container.register(Foo.self) { Foo() }
        let makeFoo = container.provider(Foo.self)
        container.register(Person.self) { Person("a", "b") }  // publishes a new table, retiring the bound one
        Container.reclaim()
        #expect(!makeFoo.isBound)
        var text = ""
        dump(makeFoo, to: &text)
        #expect(text.contains("isBound: false"))
    }

    @Test func providerOfAnUnregisteredServiceIsNotBoundAndThrowsWhatRequireThrows() throws {
        let container = Container()
        let makeFoo = container.provider(Foo.self)
        #expect(!makeFoo.isBound)
        let error = #expect(throws: ResolutionError.self) { try makeFoo() }
        #expect(error?.code == .notRegistered)
        // Registered later: the provider resolves it.
        container.register(Foo.self) { Foo() }
        _ = try makeFoo()
    }
}

/// A session that makes its cart through a provider, and a cart that holds its session: two services that reach
/// each other, the usual way to break a construction cycle.
private final class ProviderSession: Sendable {
    let makeCart: Provider<ProviderCart>
    init(makeCart: Provider<ProviderCart>) { self.makeCart = makeCart }
}

private final class ProviderCart: Sendable {
    let session: ProviderSession
    init(session: ProviderSession) { self.session = session }
}
