import Testing
import Stimpak

@Suite struct ReuseTests {
    static let reuses: [Reuse] = [.transient, .singleton, .inScope]

    @Test(arguments: reuses)
    func sameScopeTwice(reuse: Reuse) {
        let container = Container()
        container.register(Foo.self, reuse: reuse) { Foo() }
        let scope = container.openScope("a")
        let first = scope.resolve(Foo.self)
        let second = scope.resolve(Foo.self)
        #expect(first != nil)
        #expect((first === second) == (reuse != .transient))
    }

    @Test(arguments: reuses)
    func siblingScopes(reuse: Reuse) {
        let container = Container()
        container.register(Foo.self, reuse: reuse) { Foo() }
        let a = container.openScope("a").resolve(Foo.self)
        let b = container.openScope("b").resolve(Foo.self)
        #expect((a === b) == (reuse == .singleton))
    }

    @Test(arguments: reuses)
    func containerAndScope(reuse: Reuse) {
        let container = Container()
        container.register(Foo.self, reuse: reuse) { Foo() }
        let fromRoot = container.resolve(Foo.self)
        #expect((fromRoot === container.resolve(Foo.self)) == (reuse != .transient), "the container resolves from the root scope")
        #expect((fromRoot === container.openScope(1).resolve(Foo.self)) == (reuse == .singleton))
    }

    @Test(arguments: reuses)
    func factoryRunsOncePerCache(reuse: Reuse) {
        let log = EventLog()
        let container = Container()
        container.register(Foo.self, reuse: reuse) { () -> Foo in
            log.append("made")
            return Foo()
        }
        let scope = container.openScope("s")
        for _ in 0..<5 { _ = scope.resolve(Foo.self) }
        #expect(log.count(of: "made") == (reuse == .transient ? 5 : 1))
    }

    @Test func transientIsNeverStored() {
        weak var released: Foo?
        let container = Container()
        container.register(Foo.self) { Foo() }
        do {
            let foo = container.resolve(Foo.self)
            released = foo
            #expect(released != nil)
        }
        #expect(released == nil)
    }

    @Test func singletonLivesUntilTheContainerIsDisposed() {
        weak var released: Foo?
        let container = Container()
        container.register(Foo.self, reuse: .singleton) { Foo() }
        let scope = container.openScope("request")
        do {
            released = scope.resolve(Foo.self)
        }
        scope.dispose()
        #expect(released != nil, "disposing a scope keeps the singleton")
        container.dispose()
        Container.reclaim()
        #expect(released == nil)
        #expect(container.resolve(Foo.self) == nil)
        #expect(container.isDisposed)
    }

    @Test func singletonFactoryGetsTheRootScope() {
        let container = Container()
        container.register(Person.self, reuse: .singleton) { (scope: Scope) in
            Person(scope.key?.description ?? "root", "")
        }
        #expect(container.openScope("request").resolve(Person.self)?.first == "root")
    }

    @Test func inScopeDependenciesComeFromTheSameScope() throws {
        final class Session: @unchecked Sendable {
            let clock: Clock
            init(clock: Clock) { self.clock = clock }
        }
        let container = Container()
        container.register(Clock.self, reuse: .inScope)
        container.register(Session.self, reuse: .inScope) { scope in Session(clock: try scope.require(Clock.self)) }
        let a = container.openScope("a")
        let b = container.openScope("b")
        #expect(try a.require(Session.self).clock === a.require(Clock.self))
        #expect(try b.require(Session.self).clock === b.require(Clock.self))
        #expect(try a.require(Clock.self) !== b.require(Clock.self))
    }

    @Test func replacedRegistrationKeepsItsCachedInstanceAlive() {
        let log = EventLog()
        let container = Container()
        container.register(Tracked.self, reuse: .singleton) { Tracked("old", log: log) }
        let old = container.resolve(Tracked.self)
        container.register(Tracked.self, reuse: .singleton, ifAlreadyRegistered: .replace) { Tracked("new", log: log) }
        #expect(container.resolve(Tracked.self)?.name == "new")
        #expect(old?.name == "old")
        container.dispose()
        #expect(log.events == ["dispose new", "dispose old"], "both disposed, newest first")
    }

    // MARK: A container's default reuse

    @Test func containerWithADefaultReuseUsesItWhereRegisterNamesNone() {
        var container = Container(defaultReuse: .singleton)
        #expect(container.defaultReuse == .singleton)
        container.register(Foo.self) { Foo() }
        container.register(Foo.self, key: "keyed") { Foo() }
        container.register(Person.self, { (first: String) -> Person in Person(first, "") })
        container.register(Clock.self)
        container += (Foo.self, { () -> Foo in Foo() }, Reuse.transient, "transient")
        #expect(container.resolve(Foo.self) === container.resolve(Foo.self))
        #expect(container.resolve(Foo.self, key: "keyed") === container.resolve(Foo.self, key: "keyed"))
        #expect(container.resolve(Person.self, "a") === container.resolve(Person.self, "b"))
        #expect(container.resolve(Clock.self) === container.resolve(Clock.self))
        #expect(container.resolve(Foo.self, key: "transient") !== container.resolve(Foo.self, key: "transient"))

        container = Container(defaultReuse: .inScope)
        container += (Foo.self, { () -> Foo in Foo() })
        let a = container.openScope("a")
        let b = container.openScope("b")
        #expect(a.resolve(Foo.self) === a.resolve(Foo.self))
        #expect(a.resolve(Foo.self) !== b.resolve(Foo.self))
        #expect(container.registrations.count == 1)
    }

    @Test func withoutADefaultReuseRegistrationsAreTransient() {
        let container = Container()
        #expect(container.defaultReuse == .transient)
        container.register(Foo.self) { Foo() }
        #expect(container.resolve(Foo.self) !== container.resolve(Foo.self))
    }

    /// Registrations take their published words (a singleton's cached instance, a transient's disposal
    /// check) from blocks the registry hands out: 300 of them span blocks of every size, and each keeps its
    /// own, through an unregistration between them and with `Disposable` and plain instances mixed.
    @Test func everyRegistrationKeepsItsOwnPublishedWords() {
        let container = Container()
        let log = EventLog()
        for index in 0..<300 {
            switch index % 3 {
            case 0: container.register(Foo.self, reuse: .singleton, key: index) { Foo() }
            case 1: container.register(Foo.self, { () -> Foo in Foo() }, key: index)
            default: container.register(Tracked.self, { () -> Tracked in Tracked("\(index)", log: log) }, key: index)
            }
        }
        #expect(container.unregister(Foo.self, key: 3))
        let scope = container.openScope("request")
        var singletons: [ObjectIdentifier] = []
        for index in stride(from: 0, to: 300, by: 3) where index != 3 {
            let first = scope.resolve(Foo.self, key: index)
            #expect(first != nil && first === scope.resolve(Foo.self, key: index), "singleton \(index)")
            if let first { singletons.append(ObjectIdentifier(first)) }
            #expect(scope.resolve(Foo.self, key: index + 1) !== scope.resolve(Foo.self, key: index + 1))
            // A `Disposable` transient is refused (nothing would dispose it), every time, not only the first.
            #expect(scope.resolve(Tracked.self, key: index + 2) == nil)
            #expect(scope.resolve(Tracked.self, key: index + 2) == nil)
        }
        #expect(scope.resolve(Foo.self, key: 3) == nil)
        #expect(Set(singletons).count == 99)
    }

    /// A cache keeps a class instance as itself and anything else in a box, and the published word tells the
    /// lock-free path which (a bit). Every representation (a class, values of one word and more, existentials
    /// with and without witness tables, `AnyObject`, an optional, a metatype, a closure) comes back as it went
    /// in: from the locked path (the first resolve) and the lock-free one (the next), in the root and in a
    /// child scope, and for a `.scopedTo` instance from a scope below its owner.
    @Test(arguments: [Reuse.singleton, .inScope, .scopedTo("session")])
    func everyKindOfServiceComesBackFromItsCache(reuse: Reuse) {
        let container = Container()
        let session = container.openScope("session")
        let request = session.openScope("request")
        func check<Service>(
            _ type: Service.Type, _ make: @escaping @Sendable () -> Service, _ name: String,
            same: @escaping (Service, Service) -> Bool
        ) {
            container.register(Service.self, reuse: reuse) { make() }
            // `.scopedTo` needs its scope: the root has none.
            for scope in reuse == .scopedTo("session") ? [session, request] : [container.root, session, request] {
                let first = scope.resolve(Service.self)
                let second = scope.resolve(Service.self)
                #expect(first.map { made in second.map { same(made, $0) } ?? false } ?? false, "\(name) in \(scope.key as Any)")
            }
        }
        let counter = Counter()
        check(Foo.self, { Foo() }, "a class", same: ===)
        check(SmallValue.self, { SmallValue(number: counter.next()) }, "a one-word struct", same: ==)
        check(LargeValue.self, { LargeValue(number: counter.next(), name: "large") }, "a larger struct", same: ==)
        check(Int.self, { counter.next() }, "an Int", same: ==)
        check((any Numbered).self, { NumberedObject(number: counter.next()) }, "an existential", same: { $0.number == $1.number })
        check((any ObjectNumbered).self, { NumberedObject(number: counter.next()) }, "a class-bound existential", same: { $0 === $1 })
        check(AnyObject.self, { Foo() }, "AnyObject", same: ===)
        check(Optional<Foo>.self, { Foo() }, "an optional class", same: { $0 === $1 })
        check(Foo.Type.self, { Foo.self }, "a metatype", same: ==)
        check((@Sendable () -> Int).self, { { 7 } }, "a closure", same: { $0() == $1() })
    }

    @Test func providedValuesOfEveryKindComeBack() {
        let container = Container()
        let session = container.openScope("session")
        let request = session.openScope("request")
        let foo = Foo()
        session.provide(foo)
        session.provide(SmallValue(number: 1))
        session.provide(LargeValue(number: 2, name: "large"))
        session.provide(3)
        for scope in [session, request, request] {
            #expect(scope.resolve(Foo.self) === foo)
            #expect(scope.resolve(SmallValue.self) == SmallValue(number: 1))
            #expect(scope.resolve(LargeValue.self) == LargeValue(number: 2, name: "large"))
            #expect(scope.resolve(Int.self) == 3)
        }
    }
}

/// Services of every representation, for the cache tests.
struct SmallValue: Equatable, Sendable { let number: Int }
struct LargeValue: Equatable, Sendable { let number: Int; let name: String }
protocol Numbered: Sendable { var number: Int { get } }
protocol ObjectNumbered: AnyObject, Sendable { var number: Int { get } }
final class NumberedObject: Numbered, ObjectNumbered { let number: Int; init(number: Int) { self.number = number } }
