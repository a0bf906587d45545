import Foundation
import Stimpak
import StimpakTestSupport
import Testing

// Kraken's README ("Basic usage"), ported through the Kraken migration guide (MigratingFromKraken.md): each
// test names the rows it exercises.

protocol ServiceA: AnyObject, Sendable {
    func myCompanyA() -> String
}

protocol ServiceB: AnyObject, Sendable {
    var serviceA: (any ServiceA)? { get }
}

protocol ServiceC: Sendable {
    var name: String { get }
}

protocol ServiceD: Sendable {
    var host: String { get }
    var port: Int { get }
    var serviceB: any ServiceB { get }
}

protocol ServiceE: Sendable {
    var serviceA: any ServiceA { get }
    var serviceB: any ServiceB { get }
    var serviceC: any ServiceC { get }
}

final class ServiceAImpl: ServiceA, Instantiable {
    init() {}
    func myCompanyA() -> String { "A" }
}

final class ServiceBImpl: ServiceB, Instantiable, @unchecked Sendable {  // `serviceA` is set once, by its callback
    weak var serviceA: (any ServiceA)?
    init() {}
}

struct DummyImplementation: ServiceC {
    let name = "dummy"
}

struct ServiceDImpl: ServiceD {
    let host: String
    let port: Int
    let serviceB: any ServiceB
}

struct ServiceEImpl: ServiceE {
    let serviceA: any ServiceA
    let serviceB: any ServiceB
    let serviceC: any ServiceC
    init(serviceA: any ServiceA, serviceB: any ServiceB, serviceC: any ServiceC) {
        (self.serviceA, self.serviceB, self.serviceC) = (serviceA, serviceB, serviceC)
    }
    init() { self.init(serviceA: ServiceAImpl(), serviceB: ServiceBImpl(), serviceC: DummyImplementation()) }
}

/// Kraken's `GenericDataSource<ServiceAImpl>`, an eager singleton of a generic type.
final class GenericDataSource<Item>: Sendable {
    init() {}
}

enum CustomTag: Hashable, Sendable { case one, two }

@Suite struct KrakenConformanceTests {
    /// The README's `DependencyConfigurator.bootstrapDependencies()`, through the guide's rows. Row: dependency
    /// configurator → a `Module`, `container.install(…)`.
    static func bootstrapDependencies(made: Made? = nil) throws -> Container {
        let container = Container()
        container.install(DependencyConfigurator(made: made))
        return container
    }

    /// The README's `DependencyConfigurator`, as a module.
    struct DependencyConfigurator: Module {
        let made: Made?

        func register(in container: Container) {
            // Row: register(A.self, implementationType: AImpl.self, scope: .singleton).
            container.register((any ServiceA).self, implementation: ServiceAImpl.self, reuse: .singleton)
            // Row: register(C.self, implementation: existing).
            container.register((any ServiceC).self, instance: DummyImplementation())
            // Row: the circular dependency's weak property, set after creation (Kraken's callback, injectWeak).
            container.register((any ServiceB).self, reuse: .singleton) { ServiceBImpl() as any ServiceB }
                .resolved { scope, serviceB in
                    (serviceB as? ServiceBImpl)?.serviceA = try scope.require(WeakReference<any ServiceA>.self).value
                }
            // Row: runtime arguments.
            container.register((any ServiceD).self) { (scope: Scope, host: String, port: Int) in
                ServiceDImpl(host: host, port: port, serviceB: try scope.require((any ServiceB).self)) as any ServiceD
            }
            // Row: scope: .eagerSingleton, then makeEagerSingletons() at start-up.
            container.register(GenericDataSource<ServiceAImpl>.self, reuse: .eagerSingleton) { () -> GenericDataSource<ServiceAImpl> in
                made?.increment()
                return GenericDataSource()
            }
            // Row: auto-wiring, with the initializer named (ServiceEImpl also has init()).
            container.autowire((any ServiceE).self, ServiceEImpl.init(serviceA:serviceB:serviceC:))
        }
    }

    /// "After bootstrapping dependencies, its injection is as simple as invoking `Kraken.inject()`". Rows:
    /// `inject(A.self)` (global), eager singletons.
    @Test func injectAfterBootstrapping() throws {
        try DefaultContainerAccess.run {
            let made = Made()
            let container = try Self.bootstrapDependencies(made: made)
            #expect(made.value == 0)
            try container.makeEagerSingletons()
            #expect(made.value == 1, "the eager singleton is made at start-up")
            Container.default = container

            let serviceC: any ServiceC = try inject((any ServiceC).self)
            #expect(serviceC.name == "dummy")
            let serviceA: any ServiceA = try inject((any ServiceA).self)
            #expect(serviceA.myCompanyA() == "A")
            #expect(try inject((any ServiceA).self) === serviceA, "a singleton")
            // Row: inject(D.self, withArguments: "localhost", 8080).
            let serviceD = try container.require((any ServiceD).self, ("localhost", 8080))
            #expect(serviceD.host == "localhost" && serviceD.port == 8080)
            let serviceE: any ServiceE = try inject((any ServiceE).self)
            #expect(serviceE.serviceA === serviceA)
            #expect(serviceE.serviceB === serviceD.serviceB)
            #expect(made.value == 1)
        }
    }

    /// The circular dependency: ServiceB's weak `serviceA` is set after ServiceB is made, and refers to the
    /// singleton ServiceA, weakly. Row: `injectWeak(A.self).value`.
    @Test func weakPropertyOfACircularDependency() throws {
        let container = try Self.bootstrapDependencies()
        let serviceB = try container.require((any ServiceB).self)
        let serviceA = try container.require((any ServiceA).self)
        #expect(serviceB.serviceA === serviceA)
    }

    /// The circular dependency's weak property when ServiceA's factory is `async`: ServiceB's callback, which
    /// cannot await, runs again once the `await` resolve of ServiceB has made ServiceA. Row:
    /// `injectWeak(A.self).value`.
    @Test func weakPropertyWithAnAsyncFactory() async throws {
        let container = try Self.bootstrapDependencies()
        container.register((any ServiceA).self, reuse: .singleton, ifAlreadyRegistered: .replace) { (_: Scope) async in
            ServiceAImpl() as any ServiceA
        }
        let serviceB = try await container.require((any ServiceB).self)
        let serviceA = try await container.require((any ServiceA).self)
        #expect(serviceB.serviceA === serviceA)
    }

    /// `injectWeak(A.self)` as a property: `@WeakInjected` resolves on first read, from the default container,
    /// and holds the instance weakly; a value type cannot be held weakly and says so. Row:
    /// `injectWeak(A.self).value`.
    @Test func weakInjectedProperty() throws {
        try DefaultContainerAccess.run {
            final class Consumer {
                @WeakInjected var serviceA: (any ServiceA)?
            }
            let container = Container()
            container.register((any ServiceA).self, reuse: .weak) { ServiceAImpl() as any ServiceA }
            container.register((any ServiceC).self, instance: DummyImplementation())
            Container.default = container
            let consumer = Consumer()
            var held: (any ServiceA)? = try container.require((any ServiceA).self)
            #expect(consumer.serviceA === held)
            held = nil
            Container.reclaim()
            #expect(consumer.serviceA == nil, "held weakly")
            _ = held

            let error = try #require(throws: ResolutionError.self) {
                try container.require(WeakReference<any ServiceC>.self).value
            }
            #expect(error.code == .weakValueType)
        }
    }

    /// Named definitions: tags. Row: `tag: CustomTag.one`, `inject(A.self, tag: …)`.
    @Test func tags() throws {
        let container = Container()
        container.register((any ServiceC).self, key: CustomTag.one) { DummyImplementation() }
        #expect(try container.require((any ServiceC).self, key: CustomTag.one).name == "dummy")
        #expect(container.resolve((any ServiceC).self, key: CustomTag.two) == nil)
    }

    /// Kraken replaces a service registered again; Stimpak keeps the first unless told to replace it. Row:
    /// registering again.
    @Test func registeringAgain() throws {
        struct Other: ServiceC { let name = "other" }
        let container = Container()
        container.register((any ServiceC).self) { DummyImplementation() }
        container.register((any ServiceC).self) { Other() }
        #expect(try container.require((any ServiceC).self).name == "dummy", "the first is kept")
        container.register((any ServiceC).self, ifAlreadyRegistered: .replace) { Other() }
        #expect(try container.require((any ServiceC).self).name == "other")
    }

    /// A failing eager singleton, caught beside other throwing calls. Row: `catch let … as EagerSingletonFailures`.
    @Test func eagerFailuresAreCaughtByType() {
        struct Broken: Error {}
        let container = Container()
        container.register(GenericDataSource<Int>.self, reuse: .eagerSingleton) { () throws -> GenericDataSource<Int> in
            throw Broken()
        }
        var caught: EagerSingletonFailures?
        do {
            try container.requireValid()
            try container.makeEagerSingletons()
        } catch let failures as EagerSingletonFailures {
            caught = failures
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(caught?.failures.count == 1)
    }

    /// Thread safety: registering and resolving at once from several threads.
    @Test func registeringAndResolvingFromManyThreads() async throws {
        let container = try Self.bootstrapDependencies()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<8 {
                group.addTask {
                    container.register(GenericDataSource<String>.self, key: index) { GenericDataSource() }
                    _ = try container.require((any ServiceE).self)
                    _ = try container.require(GenericDataSource<String>.self, key: index)
                }
            }
            try await group.waitForAll()
        }
    }
}
