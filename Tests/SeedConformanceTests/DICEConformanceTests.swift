import Foundation
import Stimpak
import StimpakTestSupport
import Testing

// DICE's README, ported through the DICE migration guide (MigratingFromDICE.md): each test names the rows it
// exercises.

protocol DummyServiceType: AnyObject, Sendable {
    func test() -> String
}

final class DummyService: DummyServiceType {
    func test() -> String { "DummyService" }
}

protocol InternalServiceType: Sendable {
    var test: String { get }
}

struct InternalService: InternalServiceType {
    var test = "internal"
}

protocol InjectableServiceType: Sendable {
    var internalService: any InternalServiceType { get }
}

final class InjectableService: InjectableServiceType {
    let internalService: any InternalServiceType
    init(internalService: any InternalServiceType) { self.internalService = internalService }
}

/// Counts the instances made of the services below.
final class Made: @unchecked Sendable {  // `count` is guarded by `lock`
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

@Suite(.serialized) struct DICEConformanceTests {
    /// `Container.default` is process-wide: set only inside `DefaultContainerAccess.run`, which restores it.
    static func withDefault<T>(_ body: () throws -> T) rethrows -> T {
        try DefaultContainerAccess.run(body)
    }

    /// README, "Inject through DI container" and "Using DIContainer": register, `DICE.use`, resolve.
    /// Rows: `DICE.use(container)`, `container.resolve()`.
    @Test func registerUseAndResolve() throws {
        try Self.withDefault {
            let container = Container()
            container.register((any DummyServiceType).self, reuse: .eagerSingleton) { DummyService() }
            try Container.use(container)
            #expect(Container.default === container)
            let service: any DummyServiceType = try container.require()
            #expect(service.test() == "DummyService")
        }
    }

    /// DICE's `.single` is "instantiated as soon as injected in the DIContainer": made by `Container.use`,
    /// once. Rows: `.single`, `DICE.use(container)`.
    @Test func singleIsMadeWhenTheContainerIsPutToUse() throws {
        try Self.withDefault {
            let made = Made()
            let container = Container()
            container.register((any DummyServiceType).self, reuse: .eagerSingleton) { () -> any DummyServiceType in
                made.increment()
                return DummyService()
            }
            #expect(made.value == 0)
            try Container.use(container)
            #expect(made.value == 1, "made when the container is put to use")
            let first: any DummyServiceType = try container.require()
            let second: any DummyServiceType = try container.require()
            #expect(first === second)
            #expect(made.value == 1)
        }
    }

    /// `Defaults.scope = .single`: every registration without a scope is made at `use`.
    @Test func defaultScopeSingle() throws {
        try Self.withDefault {
            let made = Made()
            let container = Container(defaultReuse: .eagerSingleton)
            container.register((any DummyServiceType).self) { () -> any DummyServiceType in
                made.increment()
                return DummyService()
            }
            try Container.use(container)
            #expect(made.value == 1)
        }
    }

    /// A `.single` whose factory fails: `use` installs the container and reports the failure.
    @Test func useReportsAFailingSingle() {
        Self.withDefault {
            struct Broken: Error {}
            let container = Container()
            container.register((any DummyServiceType).self, reuse: .eagerSingleton) { () throws -> any DummyServiceType in
                throw Broken()
            }
            #expect(throws: EagerSingletonFailures.self) { try Container.use(container) }
            #expect(Container.default === container)
        }
    }

    /// The supported scopes: `.weak` is made lazily, once while someone holds it, and made again once it is
    /// gone; `.prototype` is made on each resolve; `.objectGraph` once per object graph (the default scope).
    @Test func scopes() throws {
        let made = Made()
        let container = Container(defaultReuse: .graph)  // DICE's default scope, .objectGraph
        container.register((any DummyServiceType).self, reuse: .weak) { () -> any DummyServiceType in
            made.increment()
            return DummyService()
        }
        #expect(made.value == 0, ".weak is lazy")
        var held: (any DummyServiceType)? = try container.require((any DummyServiceType).self)
        #expect(try container.require((any DummyServiceType).self) === held)
        #expect(made.value == 1)
        held = nil
        Container.reclaim()
        _ = try container.require((any DummyServiceType).self)
        #expect(made.value == 2, "made again once the last holder let go")
        _ = held

        final class Prototype: Sendable {}
        container.register(Prototype.self, reuse: .transient) { Prototype() }
        #expect(try container.require(Prototype.self) !== container.require(Prototype.self))

        final class Part: Sendable {}
        final class Whole: Sendable {
            let left: Part
            let right: Part
            init(left: Part, right: Part) { (self.left, self.right) = (left, right) }
        }
        container.register(Part.self) { Part() }  // the default: .graph
        container.register(Whole.self, reuse: .transient) { scope in
            Whole(left: try scope.require(), right: try scope.require())
        }
        let one = try container.require(Whole.self)
        let two = try container.require(Whole.self)
        #expect(one.left === one.right, "one Part per object graph")
        #expect(one.left !== two.left, "another graph, another Part")
    }

    /// "Using container resolver when injecting": a factory resolves its dependency from the container it
    /// receives. Row: `container.register(T.self) { container in … container.resolve() }`.
    @Test func factoryResolvesItsDependencies() throws {
        let container = Container()
        container.register((any InternalServiceType).self) { InternalService() }
        container.register((any InjectableServiceType).self) { scope in
            let internalService: any InternalServiceType = try scope.require()
            return InjectableService(internalService: internalService)
        }
        #expect(try container.require((any InjectableServiceType).self).internalService.test == "internal")
    }

    /// Tags: register with a tag, resolve with it from the container and through a property wrapper. Rows:
    /// `register(…, tag:)`, `resolve(tag:)`, `@Injected("tag")`.
    @Test func tags() throws {
        try Self.withDefault {
            let container = Container()
            container.register((any InternalServiceType).self, key: "dependency1") { InternalService(test: "stringInternal") }
            container.register((any InternalServiceType).self) { InternalService(test: "untagged") }
            let service: any InternalServiceType = try container.require(key: "dependency1")
            #expect(service.test == "stringInternal")
            try Container.use(container)
            final class Screen {
                @LazyInjected("dependency1") var service: any InternalServiceType
                @LazyInjected(key: "dependency1") var labelled: any InternalServiceType
            }
            #expect(Screen().service.test == "stringInternal")
            #expect(Screen().labelled.test == "stringInternal")
        }
    }

    /// "Using @Injected Property Wrapper": DICE resolves `@Injected` when the property is first read, so an
    /// object holding one may be made before the container is put to use. Row: `@Injected var a: A` →
    /// `@LazyInjected var a: A`.
    @Test func injectedResolvesOnFirstAccess() throws {
        try Self.withDefault {
            Container.default = nil
            final class ViewController {
                @LazyInjected var dummyService: any DummyServiceType
            }
            let controller = ViewController()  // no container yet
            let container = Container()
            container.register((any DummyServiceType).self, reuse: .eagerSingleton) { DummyService() }
            try Container.use(container)
            #expect(controller.dummyService.test() == "DummyService")
            #expect(controller.dummyService === (try container.require((any DummyServiceType).self)))
        }
    }
}
