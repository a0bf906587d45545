import Testing
import Stimpak

/// `.eagerSingleton` and `makeEagerSingletons()`.
@Suite struct EagerSingletonTests {
    final class Database: Sendable {}

    @Test func madeUpFrontInRegistrationOrderAndOnlyThem() throws {
        let log = EventLog()
        let container = Container()
        container.register(Tracked.self, reuse: .eagerSingleton, key: "b") { Tracked("b", log: log) }
        container.register(Foo.self, reuse: .singleton) { () -> Foo in
            log.append("lazy")
            return Foo()
        }
        container.register(Tracked.self, reuse: .eagerSingleton, key: "a") { Tracked("a", log: log) }
        container.register(Clock.self, reuse: .eagerSingleton)
        try container.makeEagerSingletons()
        #expect(log.events == [], "made, not disposed")
        let b = container.resolve(Tracked.self, key: "b")
        let a = container.resolve(Tracked.self, key: "a")
        #expect(b?.name == "b" && a?.name == "a")
        try container.makeEagerSingletons()
        #expect(container.resolve(Tracked.self, key: "b") === b, "not made again")
        container.dispose()
        #expect(log.events == ["dispose a", "dispose b"], "created b then a: disposed newest first; the lazy one never made")
        #expect(Reuse.eagerSingleton.description == ".eagerSingleton")
        #expect(Reuse.eagerSingleton != .singleton)
    }

    @Test func everyFailureIsReportedAtOnceAndTheOthersAreMade() {
        let container = Container()
        container.register(Foo.self, reuse: .eagerSingleton, key: "throws") { () -> Foo in throw Boom() }
        container.register(Clock.self, reuse: .eagerSingleton)
        container.register(Foo.self, reuse: .eagerSingleton, key: "missing dependency") { (scope: Scope) -> Foo in
            _ = try scope.require(Database.self)
            return Foo()
        }
        container.register(Person.self, { (name: String) -> Person in Person(name, "") }, reuse: .eagerSingleton)
        let error = #expect(throws: EagerSingletonFailures.self) { try container.makeEagerSingletons() }
        #expect(error?.attempted == 4)
        #expect(error?.failures.map(\.code) == [.factoryFailed, .notRegistered, .eagerSingletonWithArguments])
        #expect(error?.failures.first?.requested == ServiceKey(service: Foo.self, key: "throws"))
        let message = error?.description ?? ""
        #expect(message.hasPrefix("Stimpak could not make 3 of 4 eager singletons:"))
        #expect(message.contains("Foo[key: \"missing dependency\"] → Database"))
        #expect(message.contains("takes runtime arguments (String)"))
        #expect(message.contains("EagerSingletonTests.swift"), "the call site is named")
        #expect(container.resolve(Clock.self) != nil)
    }

    @Test func madeOnceWhenThreadsMakeThemAtOnce() {
        let made = Counter()
        let container = Container()
        container.register(Foo.self, reuse: .eagerSingleton) { () -> Foo in
            made.increment()
            return Foo()
        }
        hammer(threads: ConcurrencyTests.threads) { _ in try? container.makeEagerSingletons() }
        #expect(made.value == 1)
    }
}
