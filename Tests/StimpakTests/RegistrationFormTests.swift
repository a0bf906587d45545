import Testing
import Stimpak

/// Every registration form picks the overload its closure means: a closure taking a `Scope` first
/// receives the resolving scope; any other parameters are runtime arguments.
@Suite struct RegistrationFormTests {
    @Test func closureTakingScopeReceivesTheScope() throws {
        let container = Container()
        let scope = container.openScope("s")
        container.register(Person.self, { (scope: Scope) in Person("positional", (scope.key?.description ?? "root")) }, reuse: .inScope)
        container.register(Person.self, key: 1) { (scope: Scope) in Person("trailing", (scope.key?.description ?? "root")) }
        container.register(Person.self, reuse: .inScope, key: 2) { scope in Person("untyped", (scope.key?.description ?? "root")) }
        container.register(Person.self) { (scope: Scope, first: String) in Person(first, scope.key?.description ?? "root") }
        container.register(Person.self, { (scope: Scope, first: String, n: Int) in Person(first, "\(n)") })
        container.register(Person.self, ifAlreadyRegistered: .replace) { (scope: Scope, n: Int) in Person("\(n)", "x") }

        #expect(try scope.require(Person.self).last == "s")
        #expect(try scope.require(Person.self, key: 1).first == "trailing")
        #expect(try scope.require(Person.self, key: 2).last == "s")
        #expect(try scope.require(Person.self, "Ada").last == "s")
        #expect(try scope.require(Person.self, ("Ada", 7)).last == "7")
        #expect(try scope.require(Person.self, 5).first == "5")
        #expect(!container.isRegistered(Person.self, arguments: Scope.self), "no form takes the scope as an argument")
    }

    @Test func trailingClosureForms() throws {
        let container = Container()
        container.register(Foo.self) { Foo() }
        container.register(Foo.self, key: "A") { Foo() }
        container.register(Foo.self, reuse: .singleton, key: "S") { Foo() }
        container.register(Foo.self, key: "R", ifAlreadyRegistered: .replace) { Foo() }
        container.register(Person.self, reuse: .inScope) { (first: String, last: String) in Person(first, last) }
            .compareArgsByValue()

        #expect(container.resolve(Foo.self) !== container.resolve(Foo.self))
        #expect(container.resolve(Foo.self, key: "A") != nil)
        #expect(container.resolve(Foo.self, key: "S") === container.resolve(Foo.self, key: "S"))
        #expect(container.resolve(Foo.self, key: "R") != nil)
        #expect(container.resolve(Person.self, ("A", "B")) === container.resolve(Person.self, ("A", "B")))
        #expect(container.resolve(Person.self, ("A", "B")) !== container.resolve(Person.self, ("A", "C")))
    }

    @Test func duplicatePolicies() throws {
        let container = Container()
        let first = container.register(Person.self) { Person("first", "") }
        let skipped = container.register(Person.self) { Person("second", "") }
        #expect(first !== skipped)
        #expect(container.resolve(Person.self)?.first == "first", "skip keeps the first")

        container.register(Person.self, ifAlreadyRegistered: .replace) { Person("third", "") }
        #expect(container.resolve(Person.self)?.first == "third")

        let error = #expect(throws: RegistrationError.self) {
            try container.register(Person.self, ifAlreadyRegistered: .throw) { Person("fourth", "") }
        }
        #expect(error?.code == .alreadyRegistered)
        #expect(container.resolve(Person.self)?.first == "third", "a refused registration changes nothing")
        #expect(try container.register(Person.self, key: "new", ifAlreadyRegistered: .throw) { Person("ok", "") }.key == AnyHashable("new"))
    }

    @Test func instantiableForms() {
        let container = Container()
        container += Clock.self
        container.register(Clock.self, reuse: .singleton, key: "shared")
        #expect(container.resolve(Clock.self) !== container.resolve(Clock.self))
        #expect(container.resolve(Clock.self, key: "shared") === container.resolve(Clock.self, key: "shared"))
    }

    @Test func operatorForms() {
        let container = Container()
        container += (Foo.self, { () -> Foo in Foo() }, Reuse.singleton, "op")
        container += (Person.self, { (scope: Scope) in Person((scope.key?.description ?? "root"), "") }, Reuse.inScope)
        container += (Clock.self, { (scope: Scope) in Clock() })
        #expect(container.resolve(Foo.self, key: "op") === container.resolve(Foo.self, key: "op"))
        #expect(container.openScope(3).resolve(Person.self)?.first == "3")
        #expect(container.resolve(Clock.self) != nil)
    }

    // MARK: Instances

    @Test func registeredInstanceIsWhatEveryResolveReturns() throws {
        let container = Container()
        let clock = Clock()
        container.register(Clock.self, instance: clock)
        let other = Clock()
        container.register(instance: other, key: "other")
        #expect(try container.require(Clock.self) === clock)
        #expect(try container.openScope(1).openScope(2).require(Clock.self) === clock)
        #expect(try container.require(Clock.self, key: "other") === other)
        #expect(container.resolve(Clock.self, key: "missing") == nil)
    }

    @Test func registeredInstanceIsNotDisposedUnlessHandedOver() {
        let log = EventLog()
        let container = Container()
        container.register(Tracked.self, instance: Tracked("kept", log: log))
        container.register(Tracked.self, instance: Tracked("handed over", log: log), key: "owned", disposedWithContainer: true)
        container.register(Tracked.self, instance: Tracked("hooked", log: log), key: "hooked")
            .onDispose { log.append("onDispose \($0.name)") }
        _ = container.resolve(Tracked.self)
        _ = container.resolve(Tracked.self, key: "owned")
        _ = container.resolve(Tracked.self, key: "hooked")
        container.dispose()
        #expect(log.events.sorted() == ["dispose handed over", "onDispose hooked"])
    }
}
