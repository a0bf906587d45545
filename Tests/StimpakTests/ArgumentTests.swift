import Testing
import Stimpak

@Suite struct ArgumentTests {
    @Test func withoutComparatorTheFirstCallsArgumentsWin() {
        let container = Container()
        container.register(Person.self, { (_ first: String, _ last: String) in Person(first, last) }, reuse: .inScope)
        let bill = container.resolve(Person.self, ("Bill", "Gates"))
        let steve = container.resolve(Person.self, ("Steve", "Jobs"))
        #expect(bill === steve)
        #expect(steve?.first == "Bill")
    }

    @Test func transientUsesEachCallsArguments() {
        let container = Container()
        container.register(Person.self) { (first: String, last: String) in Person(first, last) }
        #expect(container.resolve(Person.self, ("Ada", "Lovelace"))?.last == "Lovelace")
        #expect(container.resolve(Person.self, ("Alan", "Turing"))?.last == "Turing")
    }

    @Test(arguments: [Reuse.singleton, Reuse.inScope])
    func comparatorCachesOneInstancePerClassOfEqualArguments(reuse: Reuse) {
        let container = Container()
        container.register(Person.self, { (_ a: String, _ b: String) in Person(a, b) }, reuse: reuse)
            .compareArgsBy { $0.0.lowercased() == $1.0.lowercased() && $0.1.lowercased() == $1.1.lowercased() }
        let scope = container.openScope("s")
        let bill = scope.resolve(Person.self, ("Bill", "Gates"))
        #expect(scope.resolve(Person.self, ("bill", "gates")) === bill)
        let steve = scope.resolve(Person.self, ("Steve", "Jobs"))
        #expect(steve !== bill)
        #expect(steve?.first == "Steve")
        #expect(scope.resolve(Person.self, ("STEVE", "JOBS")) === steve)
    }

    /// A comparator set after a scope made its instance (kept in the scope's table until then): that instance
    /// stays in the scope, listed by its report, until the scope is disposed; the comparator decides from
    /// then on.
    @Test func comparatorSetAfterAnInstanceWasMadeKeepsThatInstanceInTheScope() {
        let container = Container()
        let registration = container.register(
            Person.self, { (_ a: String, _ b: String) in Person(a, b) }, reuse: .inScope)
        let scope = container.openScope("s")
        weak let first = scope.resolve(Person.self, ("Ada", "Lovelace"))
        #expect(first != nil)
        registration.compareArgsBy { $0 == $1 }
        let alan = scope.resolve(Person.self, ("Alan", "Turing"))
        #expect(alan?.first == "Alan")
        #expect(scope.resolve(Person.self, ("Alan", "Turing")) === alan)
        #expect(first != nil, "the first instance lives as long as the scope")
        #expect(scope.report().instances.map(\.creation) == [1, 2])
        scope.dispose()
        Container.reclaim()
        #expect(first == nil)
    }

    @Test func comparatorMayResolveFromTheContainer() {
        let container = Container()
        container.register(Clock.self, reuse: .singleton)
        container.register(Person.self, { (_ a: String) in Person(a, "") }, reuse: .inScope)
            .compareArgsBy { left, right in container.resolve(Clock.self) != nil && left == right }
        #expect(container.resolve(Person.self, "a") === container.resolve(Person.self, "a"))
        #expect(container.resolve(Person.self, "a") !== container.resolve(Person.self, "b"))
    }

    @Test func hashableArgumentsCacheByValue() {
        let container = Container()
        let single = container.register(Person.self, { (_ a: String) in Person(a, "") }, reuse: .inScope)
        single.compareArgsByValue()
        container.register(Person.self, reuse: .singleton) { (a: String, n: Int, flag: Bool) in Person(a, "\(n)\(flag)") }
            .compareArgsByValue()

        #expect(container.resolve(Person.self, "a") === container.resolve(Person.self, "a"))
        #expect(container.resolve(Person.self, "a") !== container.resolve(Person.self, "b"))
        let scope = container.openScope(1)
        let x = scope.resolve(Person.self, ("x", 1, true))
        #expect(x?.last == "1true")
        #expect(container.resolve(Person.self, ("x", 1, true)) === x, "one singleton per argument value")
        #expect(container.resolve(Person.self, ("x", 1, false)) !== x)
        #expect(container.resolve(Person.self, ("x", 2, true)) !== x)
    }

    @Test func registrationIsIdentifiedByServiceArgumentsAndKey() {
        let container = Container()
        container.register(Person.self) { Person("none", "") }
        container.register(Person.self) { (a: String) in Person("one", a) }
        container.register(Person.self) { (a: String, b: String) in Person("two", a + b) }
        container.register(Person.self) { (a: Int) in Person("int", "\(a)") }
        container.register(Person.self, key: "k") { Person("keyed", "") }
        container.register(Person.self, key: 7) { (a: String) in Person("keyed one", a) }

        #expect(container.resolve(Person.self)?.first == "none")
        #expect(container.resolve(Person.self, "x")?.first == "one")
        #expect(container.resolve(Person.self, ("x", "y"))?.first == "two")
        #expect(container.resolve(Person.self, 3)?.first == "int")
        #expect(container.resolve(Person.self, key: "k")?.first == "keyed")
        #expect(container.resolve(Person.self, "x", 7)?.first == "keyed one")
        #expect(container.resolve(Person.self, "x", key: 7)?.first == "keyed one")
        #expect(container.resolve(Person.self, key: 7) == nil, "the key 7 registration takes an argument")
        #expect(container.resolve(Person.self, key: "7") == nil, "keys compare as AnyHashable: 7 is not \"7\"")
    }

    @Test func keysOfAnyHashableType() {
        enum Environment: Hashable { case production, staging }
        let container = Container()
        container.register(Person.self, key: Environment.production) { Person("prod", "") }
        container.register(Person.self, key: Environment.staging) { Person("staging", "") }
        #expect(container.resolve(Person.self, key: Environment.staging)?.first == "staging")
        #expect(container.resolve(Person.self, key: Environment.production)?.first == "prod")
        #expect(container.resolve(Person.self) == nil, "keyed and unkeyed registrations are distinct")
    }

    @Test func throwingFactoriesReportTheirError() {
        let container = Container()
        container.register(Person.self) { (name: String) throws -> Person in
            guard !name.isEmpty else { throw Boom() }
            return Person(name, "")
        }
        #expect(container.resolve(Person.self, "") == nil)
        #expect(container.resolve(Person.self, "ok") != nil)
        let error = #expect(throws: ResolutionError.self) { try container.require(Person.self, "") }
        #expect(error?.code == .factoryFailed)
        #expect(error?.underlyingError is Boom)
    }

    @Test func aFailedCreationLeavesTheCacheEmpty() {
        let log = EventLog()
        let container = Container()
        container.register(Foo.self, reuse: .singleton) { () throws -> Foo in
            log.append("attempt")
            if log.count(of: "attempt") == 1 { throw Boom() }
            return Foo()
        }
        #expect(container.resolve(Foo.self) == nil)
        let foo = container.resolve(Foo.self)
        #expect(foo != nil)
        #expect(container.resolve(Foo.self) === foo)
        #expect(log.count(of: "attempt") == 2)
    }
}
