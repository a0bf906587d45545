import Testing
import Stimpak

/// `Lazy`, `Provider`, `WeakReference` and `resolveAll` / `[T]`: resolvable without registering them.
@Suite struct WrapperTests {
    protocol Plugin: Sendable {
        var name: String { get }
    }
    struct NamedPlugin: Plugin {
        let name: String
    }

    /// A compile check: `Lazy` and `WeakReference` of a `Sendable` service are `Sendable` (of another service
    /// they are not, since every reader gets the one instance they keep: that the compiler refuses).
    @Test func lazyAndWeakReferenceAreSendableWhenTheirServiceIs() throws {
        func sendable<Value: Sendable>(_ value: Value) -> Value { value }
        let container = Container()
        container.register(Foo.self, reuse: .singleton) { Foo() }
        let lazy = sendable(try container.require(Lazy<Foo>.self))
        let weak = sendable(try container.require(WeakReference<Foo>.self))
        #expect(try lazy.value === weak.value)
    }

    @Test func lazyResolvesOnFirstAccessOnceFromItsScope() throws {
        let made = Counter()
        let container = Container()
        container.register(Foo.self, reuse: .inScope) { () -> Foo in
            made.increment()
            return Foo()
        }
        let scope = container.openScope("screen")
        let lazy = try scope.require(Lazy<Foo>.self)
        #expect(made.value == 0, "nothing made yet")
        let first = try lazy.value
        #expect(try lazy.value === first)
        #expect(made.value == 1)
        #expect(try scope.require(Foo.self) === first, "from the scope it was resolved in")
    }

    @Test func lazyOfAMissingServiceThrowsOnAccess() throws {
        let container = Container()
        let lazy = try container.require(Lazy<Foo>.self)
        let error = #expect(throws: ResolutionError.self) { try lazy.value }
        #expect(error?.code == .notRegistered)
        #expect(error?.requested == ServiceKey(service: Foo.self))
    }

    @Test func providerResolvesAnewOnEachCallWithOrWithoutArguments() throws {
        let container = Container()
        container.register(Foo.self) { Foo() }
        container.register(Person.self, { (first: String, last: String) -> Person in Person(first, last) })
        container.register(Foo.self, key: "keyed") { Foo() }
        let makeFoo = try container.require(Provider<Foo>.self)
        #expect(try makeFoo() !== makeFoo())
        let makePerson = try container.require(Provider<Person>.self)
        #expect(try makePerson(("Ada", "Lovelace")).last == "Lovelace")
        let keyed = try container.require(Provider<Foo>.self, key: "keyed")
        #expect(try keyed() !== keyed())
    }

    @Test func weakReferenceClosesACycleAndLeaksNothing() throws {
        final class Parent: Sendable {
            let child: Child
            init(child: Child) { self.child = child }
        }
        final class Child: Sendable {
            let parent: WeakReference<Parent>
            init(parent: WeakReference<Parent>) { self.parent = parent }
        }
        weak var released: Parent?
        do {
            let container = Container()
            container.register(Parent.self, reuse: .singleton) { (scope: Scope) in Parent(child: try scope.require(Child.self)) }
            container.autowire(Child.self, Child.init)
            let parent = try container.require(Parent.self)
            #expect(try parent.child.parent.value === parent)
            released = parent
        }
        Container.reclaim()
        #expect(released == nil, "no strong cycle: the container's release frees both")
    }

    @Test func everyRegistrationInRegistrationOrder() throws {
        let container = Container()
        container.register((any Plugin).self, key: "pdf") { NamedPlugin(name: "pdf") as any Plugin }
        container.register((any Plugin).self) { NamedPlugin(name: "default") as any Plugin }
        container.register((any Plugin).self, key: 3) { NamedPlugin(name: "three") as any Plugin }
        container.register((any Plugin).self, { (name: String) -> any Plugin in NamedPlugin(name: name) })
        #expect(container.resolveAll((any Plugin).self).map(\.name) == ["pdf", "default", "three"])
        #expect(try container.requireAll((any Plugin).self).count == 3)
        #expect(try container.require([any Plugin].self).map(\.name) == ["pdf", "default", "three"])
        #expect(container.resolveAll(Foo.self).isEmpty)
    }

    @Test func wrappersAreAutowiredParameters() throws {
        final class Screen: Sendable {
            let exporter: Lazy<Foo>
            let makePerson: Provider<Person>
            let plugins: [any Plugin]
            init(exporter: Lazy<Foo>, makePerson: Provider<Person>, plugins: [any Plugin]) {
                self.exporter = exporter
                self.makePerson = makePerson
                self.plugins = plugins
            }
        }
        let container = Container()
        container.register(Foo.self, reuse: .singleton) { Foo() }
        container.register(Person.self, { (name: String) -> Person in Person(name, "") })
        container.register((any Plugin).self, key: 1) { NamedPlugin(name: "one") as any Plugin }
        let registration = container.autowire(Screen.self, Screen.init)
        #expect(
            registration.dependencies == [
                ServiceKey(service: Foo.self), ServiceKey(service: Person.self), ServiceKey(service: (any Plugin).self),
            ])
        let screen = try container.require(Screen.self)
        #expect(try screen.exporter.value === container.require(Foo.self))
        #expect(try screen.makePerson("Ada").first == "Ada")
        #expect(screen.plugins.map(\.name) == ["one"])
    }
}

/// A weak reference to a class-constrained protocol (Kraken's `injectWeak(ServiceA.self)`), and what happens
/// to a value type.
@Suite struct WeakProtocolReferenceTests {
    protocol Delegate: AnyObject, Sendable {
        var name: String { get }
    }

    final class ScreenDelegate: Delegate {
        let name = "screen"
    }

    protocol Measure: Sendable {}
    struct Meter: Measure {}

    final class Owner: @unchecked Sendable {
        @WeakInjected var delegate: (any Delegate)?
    }

    @Test func aReferenceToAClassConstrainedProtocolIsWeak() throws {
        let container = Container()
        container.register((any Delegate).self, reuse: .weak) { ScreenDelegate() }
        var held: (any Delegate)? = try container.require((any Delegate).self)
        let reference = try container.require(WeakReference<any Delegate>.self)
        #expect(try reference.value === held)
        #expect(try reference.value?.name == "screen")
        let owner = container.root.withCurrent { Owner() }
        #expect(owner.delegate === held)
        held = nil
        Container.reclaim()
        #expect(try reference.value == nil, "held weakly: gone once released")
        #expect(owner.delegate == nil)
        _ = held
    }

    @Test func aReferenceToAValueSaysWhatToUseInstead() throws {
        let container = Container()
        container.register((any Measure).self) { Meter() }
        let reference = try container.require(WeakReference<any Measure>.self)
        let error = try #require(throws: ResolutionError.self) { try reference.value }
        #expect(error.code == .weakValueType)
        #expect(error.description.contains("a WeakReference or @WeakInjected asked for it, but it resolved to a value"))
        #expect(error.description.contains("Fix: hold it with Lazy<Measure> or @LazyInjected"))
    }
}
