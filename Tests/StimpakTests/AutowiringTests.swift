import Testing
import Stimpak

/// `autowire(_:_:)` and `register(_:implementation:)`.
@Suite struct AutowiringTests {
    final class A: Sendable {}
    final class B: Sendable {}
    final class C: Sendable {}
    final class D: Sendable {}
    final class E: Sendable {}
    final class F: Sendable {}
    final class Missing: Sendable {}

    protocol ServiceE: Sendable {
        var parts: [any AnyObject & Sendable] { get }
    }
    final class ServiceEImpl: ServiceE {
        let parts: [any AnyObject & Sendable]
        init() { parts = [] }
        init(a: A) { parts = [a] }
        init(a: A, b: B) { parts = [a, b] }
        init(a: A, b: B, c: C) { parts = [a, b, c] }
        init(a: A, b: B, c: C, d: D) { parts = [a, b, c, d] }
        init(a: A, b: B, c: C, d: D, e: E) { parts = [a, b, c, d, e] }
        init(a: A, b: B, c: C, d: D, e: E, f: F) { parts = [a, b, c, d, e, f] }
        init(a: A, missing: Missing?) { parts = [a] + (missing.map { [$0] } ?? []) }
        init(a: A, missing: Missing) { parts = [a, missing] }
    }

    static func makeContainer() -> Container {
        let container = Container()
        container.register(A.self, reuse: .singleton) { A() }
        container.register(B.self, reuse: .singleton) { B() }
        container.register(C.self, reuse: .singleton) { C() }
        container.register(D.self, reuse: .singleton) { D() }
        container.register(E.self, reuse: .singleton) { E() }
        container.register(F.self, reuse: .singleton) { F() }
        return container
    }

    @Test func initializersOfZeroToSixParametersAreAutowired() throws {
        let container = Self.makeContainer()
        container.autowire((any ServiceE).self, key: 0, { ServiceEImpl() as any ServiceE })
        container.autowire((any ServiceE).self, key: 1, ServiceEImpl.init(a:))
        container.autowire((any ServiceE).self, key: 2, ServiceEImpl.init(a:b:))
        container.autowire((any ServiceE).self, key: 3, ServiceEImpl.init(a:b:c:))
        container.autowire((any ServiceE).self, key: 4, ServiceEImpl.init(a:b:c:d:))
        container.autowire((any ServiceE).self, key: 5, ServiceEImpl.init(a:b:c:d:e:))
        container.autowire((any ServiceE).self, key: 6, ServiceEImpl.init(a:b:c:d:e:f:))
        let all: [AnyObject] = [
            try container.require(A.self), try container.require(B.self), try container.require(C.self),
            try container.require(D.self), try container.require(E.self), try container.require(F.self),
        ]
        for count in 0...6 {
            let service = try container.require((any ServiceE).self, key: count)
            #expect(service.parts.count == count)
            #expect(zip(service.parts, all).allSatisfy { $0 === $1 }, "each parameter resolved by its type")
        }
    }

    @Test func dependenciesAreKnownWithoutMakingAnything() {
        let container = Container()
        let registration = container.autowire(ServiceEImpl.self, ServiceEImpl.init(a:missing:) as @Sendable (A, Missing?) -> ServiceEImpl)
        #expect(registration.dependencies == [ServiceKey(service: A.self), ServiceKey(service: Missing.self)])
        #expect(container.register(Foo.self) { Foo() }.dependencies == nil, "a closure factory declares nothing")
    }

    @Test func optionalParameterIsNilWhenItsTypeIsNotRegistered() throws {
        let container = Self.makeContainer()
        container.autowire(ServiceEImpl.self, ServiceEImpl.init(a:missing:) as @Sendable (A, Missing?) -> ServiceEImpl)
        #expect(try container.require(ServiceEImpl.self).parts.count == 1)
        container.register(Missing.self) { Missing() }
        #expect(try container.require(ServiceEImpl.self).parts.count == 2)
    }

    @Test func optionalParameterWhoseOwnDependencyIsMissingIsAnError() {
        final class Needy: Sendable {
            init(_ missing: Missing) {}
        }
        final class Root: Sendable {
            init(_ needy: Needy?) {}
        }
        let container = Container()
        container.autowire(Needy.self, Needy.init)
        container.autowire(Root.self, Root.init)
        let error = #expect(throws: ResolutionError.self) { try container.require(Root.self) }
        #expect(error?.code == .notRegistered)
        #expect(error?.pathDescription == "Root → Needy → Missing")
    }

    @Test func missingDependencyFailsWithThePath() {
        let container = Self.makeContainer()
        container.autowire((any ServiceE).self, ServiceEImpl.init(a:missing:) as @Sendable (A, Missing) -> ServiceEImpl)
        let error = #expect(throws: ResolutionError.self) { try container.require((any ServiceE).self) }
        #expect(error?.code == .notRegistered)
        #expect(error?.requested == ServiceKey(service: Missing.self))
        #expect(error?.pathDescription == "ServiceE → Missing")
    }

    @Test func autowiredRegistrationsTakeReuseAndKeys() throws {
        let container = Self.makeContainer()
        container.autowire(ServiceEImpl.self, reuse: .singleton, key: "shared", ServiceEImpl.init(a:b:))
        #expect(try container.require(ServiceEImpl.self, key: "shared") === container.require(ServiceEImpl.self, key: "shared"))
        #expect(container.resolve(ServiceEImpl.self) == nil)
    }

    @Test func implementationTypeIsMadeForTheProtocol() throws {
        final class SystemClock: Instantiable, TimeSource {
            required init() {}
        }
        let container = Container()
        container.register((any TimeSource).self, implementation: SystemClock.self, reuse: .singleton)
        #expect(try container.require((any TimeSource).self) is SystemClock)
        container.register((any TimeSource).self, implementation: Clock.self, key: "wrong")
        let error = #expect(throws: ResolutionError.self) { try container.require((any TimeSource).self, key: "wrong") }
        #expect(error?.code == .factoryFailed)
        #expect(error?.description.contains("Clock is not a TimeSource") == true, "\(error?.description ?? "")")
    }

    final class Pool: Sendable {}
    final class Session: Sendable {
        let pool: Pool
        let database: A
        init(pool: Pool, database: A) async {
            self.pool = pool
            self.database = database
        }
    }

    @Test("an async initializer autowires: its parameters resolve with await, async factories included")
    func asyncAutowire() async throws {
        let container = Container()
        container.register(Pool.self, reuse: .singleton) { () async in Pool() }
        container.register(A.self) { A() }
        let registration = container.autowire(Session.self, reuse: .inScope, Session.init)
        #expect(registration.dependencies == [ServiceKey(service: Pool.self), ServiceKey(service: A.self)])
        let scope = container.openScope()
        let session = try await scope.require(Session.self)
        #expect(try await session === scope.require(Session.self))
        #expect(try await session.pool === container.require(Pool.self))
        let other = container.openScope()
        #expect(throws: ResolutionError.self, "a synchronous resolve of an uncached async service") {
            _ = try other.require(Session.self)
        }
        await other.dispose()
        #expect(container.validate().problems.isEmpty)
    }

    @Test("an async autowired initializer's optional parameter is nil when unregistered, and a missing one fails with its path")
    func asyncAutowireOptionalAndMissing() async throws {
        final class Report: Sendable {
            let missing: Missing?
            init(a: A, missing: Missing?) async { self.missing = missing }
        }
        final class Strict: Sendable {
            init(a: A, missing: Missing) async {}
        }
        let container = Container()
        container.register(A.self) { A() }
        container.autowire(Report.self, Report.init)
        container.autowire(Strict.self, Strict.init)
        #expect(try await container.require(Report.self).missing == nil)
        do {
            _ = try await container.require(Strict.self)
            Issue.record("resolved without its dependency")
        } catch let error as ResolutionError {
            #expect(error.code == .notRegistered)
            #expect(error.path == [ServiceKey(service: Strict.self), ServiceKey(service: Missing.self)])
        }
        #expect(container.validate().problems.map(\.code) == [.notRegistered])
    }
}

protocol TimeSource: AnyObject {}
