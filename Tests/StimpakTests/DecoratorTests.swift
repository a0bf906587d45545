import Testing
import Stimpak

/// `decorate`: wrappers around every instance of a service.
@Suite struct DecoratorTests {
    protocol Repository: Sendable {
        var trail: [String] { get }
    }
    struct Base: Repository {
        let name: String
        var trail: [String] { [name] }
    }
    struct Wrapper: Repository {
        let label: String
        let inner: any Repository
        var trail: [String] { inner.trail + [label] }
    }

    @Test func decoratorsApplyInRegistrationOrderToEveryKeyAndLifetime() throws {
        let container = Container()
        container.register((any Repository).self) { Base(name: "transient") as any Repository }
        container.decorate((any Repository).self) { _, inner in Wrapper(label: "logging", inner: inner) }
        container.register((any Repository).self, reuse: .singleton, key: "shared") { Base(name: "singleton") as any Repository }
        container.decorate((any Repository).self) { _, inner in Wrapper(label: "caching", inner: inner) }
        #expect(try container.require((any Repository).self).trail == ["transient", "logging", "caching"])
        #expect(try container.require((any Repository).self).trail == ["transient", "logging", "caching"], "lock-free too")
        #expect(try container.require((any Repository).self, key: "shared").trail == ["singleton", "logging", "caching"])
    }

    @Test func aKeyedDecoratorAppliesOnlyToThatKey() throws {
        let container = Container()
        container.register((any Repository).self, key: "a") { Base(name: "a") as any Repository }
        container.register((any Repository).self, key: "b") { Base(name: "b") as any Repository }
        container.decorate((any Repository).self, key: "b") { _, inner in Wrapper(label: "only b", inner: inner) }
        #expect(try container.require((any Repository).self, key: "a").trail == ["a"])
        #expect(try container.require((any Repository).self, key: "b").trail == ["b", "only b"])
    }

    @Test func aReusedInstanceIsDecoratedOnceAndCachedDecorated() throws {
        final class Counted: Sendable {
            let inner: Counted?
            init(_ inner: Counted?) { self.inner = inner }
        }
        let decorated = Counter()
        let container = Container()
        container.register(Counted.self, reuse: .singleton) { Counted(nil) }
        _ = try container.require(Counted.self)  // publishes the table: the decorator must retire it
        container.unregister(Counted.self)
        container.register(Counted.self, reuse: .singleton) { Counted(nil) }
        container.decorate(Counted.self) { _, inner in
            decorated.increment()
            return Counted(inner)
        }
        let first = try container.require(Counted.self)
        #expect(first.inner != nil)
        #expect(try container.openScope(1).require(Counted.self) === first)
        #expect(decorated.value == 1)
    }

    @Test func decoratorReceivesTheScopeAndItsFailureHasThePath() throws {
        let container = Container()
        container.register(Person.self, reuse: .inScope) { (scope: Scope) in Person("\(scope.key.map { "\($0.base)" } ?? "root")", "") }
        container.decorate(Person.self) { scope, inner in Person(inner.first, "decorated in \(scope.key.map { "\($0.base)" } ?? "root")") }
        #expect(try container.openScope("s").require(Person.self).last == "decorated in s")

        container.register(Foo.self) { Foo() }
        container.decorate(Foo.self) { _, _ in throw Boom() }
        let error = #expect(throws: ResolutionError.self) { try container.require(Foo.self) }
        #expect(error?.code == .factoryFailed)
        #expect(error?.description.contains("boom") == true)
    }
}
