import Testing
import Stimpak

/// Registrations made in a scope: seen by it and below, shadowing the container's, gone with the scope, and
/// under every rule of the container's registrations.
@Suite struct ScopeRegistrationTests {
    final class Service: @unchecked Sendable {
        let name: String
        init(_ name: String) { self.name = name }
    }

    final class Consumer: @unchecked Sendable {
        let service: Service
        init(_ service: Service) { self.service = service }
    }

    @Test("a scope's registration shadows the container's in it and below, and nowhere else")
    func shadows() throws {
        let container = Container()
        container.register(Service.self) { Service("app") }
        let test = container.openScope("test")
        let below = test.openScope("below")
        let sibling = container.openScope("sibling")
        test.register(Service.self) { Service("test") }
        #expect(try test.require(Service.self).name == "test")
        #expect(try below.require(Service.self).name == "test")
        #expect(try sibling.require(Service.self).name == "app")
        #expect(try container.require(Service.self).name == "app")
        #expect(test.isRegistered(Service.self))
        #expect(!sibling.isRegistered(Service.self, key: "nothing"))
    }

    @Test("the container's services resolved from the scope get the override; singletons, which resolve from the root, do not")
    func dependentsSeeTheOverride() throws {
        let container = Container()
        container.register(Service.self) { Service("app") }
        container.register(Consumer.self, reuse: .inScope) { (scope: Scope) in Consumer(try scope.require(Service.self)) }
        container.autowire(Greeting.self) { (service: Service) in Greeting(service.name) }
        let test = container.openScope("test")
        test.register(Service.self) { Service("test") }
        #expect(try test.require(Consumer.self).service.name == "test")
        #expect(try test.require(Greeting.self).text == "test", "autowired parameters too")
        #expect(try container.require(Consumer.self).service.name == "app")
    }

    struct Greeting {
        let text: String
        init(_ text: String) { self.text = text }
    }

    @Test("every register form works on a scope")
    func everyForm() throws {
        let container = Container()
        let scope = container.openScope("s")
        scope.register(Foo.self, { Foo() })
        scope.register(Person.self, { (first: String, last: String) in Person(first, last) })
        scope.register(Service.self) { (scope: Scope) in Service("scope-taking \(scope.key!)") }
        scope.register(Clock.self, reuse: .singleton)
        scope.register(Greeting.self, instance: Greeting("instance"))
        scope.register((any Greeter).self, implementation: Hello.self)
        scope.autowire(Consumer.self) { (service: Service) in Consumer(service) }
        scope += (Int.self, { () -> Int in 42 })
        scope.register(String.self, key: "trailing") { "trailing" }
        #expect(scope.resolve(Foo.self) != nil)
        #expect(try scope.require(Person.self, ("Ada", "Lovelace")).last == "Lovelace")
        #expect(try scope.require(Service.self).name == "scope-taking s")
        #expect(try scope.require(Clock.self) === scope.require(Clock.self))
        #expect(try scope.require(Greeting.self).text == "instance")
        #expect(try scope.require((any Greeter).self).greeting == "hello")
        #expect(try scope.require(Consumer.self).service.name == "scope-taking s")
        #expect(try scope.require(Int.self) == 42)
        #expect(try scope.require(String.self, key: "trailing") == "trailing")
        #expect(container.resolve(Foo.self) == nil, "none of it reached the container")
        #expect(container.registrations.isEmpty)
    }

    struct Hello: Greeter, Instantiable {
        var greeting: String { "hello" }
        init() {}
    }

    @Test("reuse has the scope in the root's place: its singleton lives in it, .inScope in each resolving scope")
    func reuse() throws {
        let container = Container()
        container.register(Service.self, reuse: .singleton) { Service("app") }
        let test = container.openScope("test")
        let a = test.openScope("a")
        let b = test.openScope("b")
        test.register(Service.self, reuse: .singleton) { Service("test") }
        let shared = try a.require(Service.self)
        #expect(try b.require(Service.self) === shared)
        #expect(try test.require(Service.self) === shared)
        #expect(try container.require(Service.self) !== shared)
        test.register(Foo.self, reuse: .inScope) { Foo() }
        #expect(try a.require(Foo.self) === a.require(Foo.self))
        #expect(try a.require(Foo.self) !== b.require(Foo.self))
        #expect(try test.require(Foo.self) !== a.require(Foo.self))
    }

    @Test(".scopedTo in a scope's registration looks from the resolving scope up to that scope, no further")
    func scopedTo() throws {
        let container = Container()
        let session = container.openScope(SessionID(id: 1))
        let test = session.openScope("test")
        test.register(Foo.self, reuse: .scopedTo(SessionID.self)) { Foo() }
        test.register(Service.self, reuse: .scopedTo("flow")) { Service("flow") }
        let flow = test.openScope("flow")
        let step = flow.openScope("step")
        #expect(try step.require(Service.self) === flow.require(Service.self))
        let error = try #require(throws: ResolutionError.self) { try step.require(Foo.self) }
        #expect(error.code == .noMatchingScope)
        #expect(error.searchedScopeKeys == ["step", "flow", "test"], "up to the registering scope, not the session above it")
    }

    struct SessionID: Hashable { let id: Int }

    @Test("keys and runtime arguments: only the same service, arguments and key is shadowed")
    func keysAndArguments() throws {
        let container = Container()
        container.register(Service.self, key: "a") { Service("app a") }
        container.register(Service.self, key: "b") { Service("app b") }
        container.register(Service.self, { (name: String) in Service("app \(name)") })
        let test = container.openScope("test")
        test.register(Service.self, key: "a") { Service("test a") }
        test.register(Service.self, { (name: String) in Service("test \(name)") })
        #expect(try test.require(Service.self, key: "a").name == "test a")
        #expect(try test.require(Service.self, key: AnyHashable("a")).name == "test a")
        #expect(try test.require(Service.self, key: "b").name == "app b")
        #expect(try test.require(Service.self, "x").name == "test x")
        #expect(test.resolveAll(Service.self).map(\.name) == ["test a", "app b"], "resolveAll sees the override")
    }

    @Test("a duplicate in the same scope follows the policy; the container's registration is no conflict")
    func duplicatePolicy() throws {
        let container = Container()
        container.register(Service.self) { Service("app") }
        let test = container.openScope("test")
        try test.register(Service.self, ifAlreadyRegistered: .throw) { Service("first") }
        test.register(Service.self) { Service("skipped") }
        #expect(try test.require(Service.self).name == "first")
        let error = try #require(throws: RegistrationError.self) {
            try test.register(Service.self, ifAlreadyRegistered: .throw) { Service("thrown") }
        }
        #expect(error.code == .alreadyRegistered)
        test.register(Service.self, ifAlreadyRegistered: .replace) { Service("replaced") }
        #expect(try test.require(Service.self).name == "replaced")
        #expect(test.unregister(Service.self))
        #expect(try test.require(Service.self).name == "app", "the container's again")
        #expect(!test.unregister(Service.self))
    }

    @Test("a replaced or unregistered singleton is no longer served lock-free from a scope below")
    func noStaleInstanceAfterChange() throws {
        let container = Container()
        let test = container.openScope("test")
        let below = test.openScope("below")
        test.register(Service.self, reuse: .singleton) { Service("one") }
        for _ in 0..<3 { #expect(try below.require(Service.self).name == "one") }
        test.register(Service.self, reuse: .singleton, ifAlreadyRegistered: .replace) { Service("two") }
        for _ in 0..<3 { #expect(try below.require(Service.self).name == "two") }
        below.register(Service.self, reuse: .singleton) { Service("below") }
        for _ in 0..<3 { #expect(try below.require(Service.self).name == "below") }
        below.unregister(Service.self)
        for _ in 0..<3 { #expect(try below.require(Service.self).name == "two") }
        test.unregister(Service.self)
        #expect(below.resolve(Service.self) == nil)
    }

    @Test("the registration and its instances go away with the scope: disposed, and released")
    func goesAwayWithScope() throws {
        let container = Container()
        let log = EventLog()
        weak var captured: Foo?
        weak var instance: Tracked?
        do {
            let test = container.openScope("test")
            let foo = Foo()
            captured = foo
            test.register(Tracked.self, reuse: .singleton) {
                _ = foo; return Tracked("override", log: log)
            }
            instance = try test.require(Tracked.self)
            #expect(try test.openScope("child").require(Tracked.self) === instance)
            test.dispose()
            #expect(log.events == ["dispose override"])
            let error = try #require(throws: ResolutionError.self) { try test.require(Tracked.self) }
            #expect(error.code == .scopeDisposed)
        }
        Container.reclaim()
        #expect(instance == nil)
        #expect(captured == nil, "the factory and what it captured are released")
        #expect(container.resolve(Tracked.self) == nil)
        let error = try #require(throws: ResolutionError.self) { try container.openScope("other").require(Tracked.self) }
        #expect(error.code == .notRegistered)
    }

    @Test("resolved where it is not visible, the error says where it is registered and what to do")
    func notVisibleMessage() throws {
        let container = Container()
        container.openScope("test").register(Service.self) { Service("test") }
        let error = try #require(throws: ResolutionError.self) { try container.openScope("other").require(Service.self) }
        #expect(error.code == .notRegistered)
        #expect(error.description.contains("It is registered in a scope (scope.register), but resolved from a scope that is not that one or below it."))
        #expect(error.description.contains("Fix: resolve it from the scope that registered it or one below"))
    }

    @Test("cycles, captive rules and callbacks apply to a scope's registrations")
    func rules() throws {
        let container = Container()
        let test = container.openScope("test")
        test.register(Service.self) { (scope: Scope) in Service(try scope.require(Consumer.self).service.name) }
        test.register(Consumer.self) { (scope: Scope) in Consumer(try scope.require(Service.self)) }
        let cycle = try #require(throws: ResolutionError.self) { try test.require(Service.self) }
        #expect(cycle.code == .dependencyCycle)
        // A singleton of the scope may use the scope's `.inScope` services: both live as long as the scope.
        let scoped = container.openScope("scoped")
        scoped.register(Foo.self, reuse: .inScope) { Foo() }
        scoped.register(Consumer.self, reuse: .singleton) { (scope: Scope) in
            _ = try scope.require(Foo.self)
            return Consumer(Service("ok"))
        }
        #expect(try scoped.require(Consumer.self).service.name == "ok")
        let log = EventLog()
        scoped.register(Service.self, reuse: .inScope) { Service("cb") }
            .resolved { _, service in log.append("resolved \(service.name)") }
        _ = try scoped.require(Service.self)
        _ = try scoped.require(Service.self)
        #expect(log.events == ["resolved cb"])
    }

    @Test("decorators apply to a scope's registrations, made before or after the decorator")
    func decorators() throws {
        let container = Container()
        let test = container.openScope("test")
        test.register(Service.self, key: "before") { Service("before") }
        container.decorate(Service.self) { _, service in Service("decorated \(service.name)") }
        test.register(Service.self, key: "after") { Service("after") }
        #expect(try test.require(Service.self, key: "before").name == "decorated before")
        #expect(try test.require(Service.self, key: "after").name == "decorated after")
    }

    @Test("a cached instance of a scope's registration is found without the container's lock")
    func cachedHitIsLockFree() throws {
        let container = Container()
        let test = container.openScope("test")
        let below = test.openScope("below")
        test.register(Service.self, reuse: .singleton) { Service("test") }
        below.register(Foo.self, reuse: .inScope) { Foo() }
        // `compareArgsByValue` hashes the arguments under the container's lock: a key whose hash blocks holds it.
        let letGo = Signal()
        let hashing = Shared(false)
        let byKey = container.register(Person.self, { (_ key: BlockingKey) in Person("a", "b") }, reuse: .inScope)
        byKey.compareArgsByValue()
        let service = try below.require(Service.self)
        let foo = try below.require(Foo.self)
        _ = try below.require(Service.self)  // the second resolve publishes it in `below`
        _ = try below.require(Foo.self)
        let holder = Shared(false)
        detach {
            _ = container.resolve(Person.self, BlockingKey(letGo: letGo, isHashing: hashing))
            holder.value = true
        }
        while !hashing.value {}
        #expect(try below.require(Service.self) === service, "served while the lock is held")
        #expect(try below.require(Foo.self) === foo, "served while the lock is held")
        letGo.fire()
        while !holder.value {}
    }

    @Test("8 threads resolving a scope's singleton and .inScope service at once get one instance each")
    func exactlyOnce() {
        let log = EventLog()
        let container = Container()
        let test = container.openScope("test")
        let below = test.openScope("below")
        let scopedLog = EventLog()
        test.register(Counted.self, reuse: .singleton) { Counted(log) }
        test.register(Counted.self, reuse: .inScope, key: "scoped") { Counted(scopedLog) }
        let seen = EventLog()
        let seenScoped = EventLog()
        hammer(threads: 8) { index in
            let scope = index.isMultiple(of: 2) ? test : below
            if let counted = scope.resolve(Counted.self) { seen.append("\(ObjectIdentifier(counted))") }
            if let counted = below.resolve(Counted.self, key: "scoped") { seenScoped.append("\(ObjectIdentifier(counted))") }
        }
        #expect(Set(seen.events).count == 1)
        #expect(seen.events.count == 8)
        #expect(log.count(of: "made") == 1)
        #expect(Set(seenScoped.events).count == 1)
        #expect(seenScoped.events.count == 8)
        #expect(scopedLog.count(of: "made") == 1)
    }
}
