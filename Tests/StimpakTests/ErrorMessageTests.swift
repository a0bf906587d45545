import Testing
import Stimpak

final class A: @unchecked Sendable { init(_ b: B?) {} }
final class B: @unchecked Sendable { init(_ a: A?) {} }

@Suite struct ErrorMessageTests {
    @Test func notRegisteredNamesServiceKeyArgumentsAndAlternatives() {
        let container = Container()
        container.register(Person.self, key: "A") { Person("", "") }
        container.register(Person.self) { (a: String, b: String) in Person(a, b) }
        let error = #expect(throws: ResolutionError.self) { try container.require(Person.self, 42, "B") }
        #expect(error?.code == .notRegistered)
        #expect(error?.requested == ServiceKey(service: Person.self, arguments: Int.self, key: "B"))
        #expect(
            error?.description == """
                Stimpak has no registration for Person(Int)[key: "B"] (service Person, arguments Int, key "B"). \
                Registered for Person: Person(String, String), Person[key: "A"]. \
                Fix: register it, e.g. container.register(Person.self) { ... }, or resolve with the key and argument \
                types of an existing registration. (require at StimpakTests/ErrorMessageTests.swift:\(error?.line ?? 0))
                """)
        #expect(error?.line == 12)
    }

    @Test func notRegisteredWithNothingForTheType() {
        let container = Container()
        let error = #expect(throws: ResolutionError.self) { try container.require(Foo.self) }
        #expect(error?.registeredAlternatives.isEmpty == true)
        #expect(
            error?.description.hasPrefix(
                "Stimpak has no registration for Foo (service Foo, arguments (), no key). Nothing is registered for Foo under any key or arguments.") == true)
    }

    @Test func missingDependencyShowsThePath() {
        let container = Container()
        container.register(A.self) { scope in A(try scope.require(B.self)) }
        let error = #expect(throws: ResolutionError.self) { try container.require(A.self) }
        #expect(error?.code == .notRegistered)
        #expect(error?.requested.service == B.self)
        #expect(error?.pathDescription == "A → B")
        #expect(error?.description.contains("Resolution path: A → B.") == true)
    }

    @Test(arguments: [Reuse.transient, Reuse.singleton, Reuse.inScope])
    func cycleThroughTheScopeIsReportedWithItsPath(reuse: Reuse) {
        let container = Container()
        container.register(A.self, reuse: reuse) { scope in A(try scope.require(B.self)) }
        container.register(B.self, reuse: reuse) { scope in B(try scope.require(A.self)) }
        let error = #expect(throws: ResolutionError.self) { try container.openScope(1).require(A.self) }
        #expect(error?.code == .dependencyCycle)
        #expect(error?.pathDescription == "A → B → A")
        #expect(error?.description.hasPrefix("Stimpak found a dependency cycle while resolving A: A → B → A. Fix: break the cycle") == true)
        #expect(container.openScope(1).resolve(A.self) == nil, "nothing was left half-made in the cache")
    }

    @Test func cycleThroughACapturedContainerIsCaughtToo() {
        let container = Container()
        container.register(A.self) { () throws -> A in A(try container.require(B.self)) }
        container.register(B.self) { () throws -> B in B(try container.require(A.self)) }
        let error = #expect(throws: ResolutionError.self) { try container.require(B.self) }
        #expect(error?.code == .dependencyCycle)
        #expect(error?.pathDescription == "B → A → B")
    }

    @Test func aFactoryMayTolerateACycleWithResolve() {
        let container = Container()
        container.register(A.self) { A(container.resolve(B.self)) }
        container.register(B.self) { () throws -> B in B(try container.require(A.self)) }
        #expect(container.resolve(B.self) != nil, "A's factory swallows the cycle with resolve and makes an A with no B")
    }

    @Test func selfDependencyOfASingleton() {
        let container = Container()
        container.register(A.self, reuse: .singleton) { scope in A(try scope.require(A.self) as A? == nil ? nil : nil) }
        let error = #expect(throws: ResolutionError.self) { try container.require(A.self) }
        #expect(error?.code == .dependencyCycle)
        #expect(error?.pathDescription == "A → A")
    }

    @Test func keyedAndArgumentRegistrationsReadInThePath() {
        let container = Container()
        container.register(A.self, key: "a") { (scope: Scope, n: Int) in A(try scope.require(B.self, key: "b")) }
        container.register(B.self, key: "b") { scope in B(try scope.require(A.self, 2, key: "a")) }
        let error = #expect(throws: ResolutionError.self) { try container.require(A.self, 1, key: "a") }
        #expect(error?.pathDescription == #"A(Int)[key: "a"] → B[key: "b"] → A(Int)[key: "a"]"#)
    }

    @Test func disposedScope() {
        let container = Container()
        container.register(Foo.self) { Foo() }
        let scope = container.openScope("request-17")
        scope.dispose()
        let error = #expect(throws: ResolutionError.self) { try scope.require(Foo.self) }
        #expect(error?.code == .scopeDisposed)
        #expect(error?.scopeKey == AnyHashable("request-17"))
        #expect(
            error?.description.hasPrefix(
                #"Stimpak cannot resolve Foo: the scope "request-17" has been disposed. Fix: resolve from a scope that is still open, or open a new one with openScope(_:) on its parent."#) == true)
        container.dispose()
        let rootError = #expect(throws: ResolutionError.self) { try container.require(Foo.self) }
        #expect(rootError?.description.hasPrefix("Stimpak cannot resolve Foo: the container has been disposed, and with it every scope and singleton.") == true)
    }

    @Test func factoryFailureCarriesTheUnderlyingErrorAndPath() {
        let container = Container()
        container.register(A.self) { scope in A(try scope.require(B.self)) }
        container.register(B.self) { () throws -> B in throw Boom() }
        let error = #expect(throws: ResolutionError.self) { try container.require(A.self) }
        #expect(error?.code == .factoryFailed)
        #expect(error?.requested.service == B.self)
        #expect(error?.underlyingError is Boom)
        #expect(error?.pathDescription == "A → B")
        #expect(
            error?.description.hasPrefix(
                "The factory of B threw: boom. Resolution path: A → B. Fix: make the factory succeed for this input") == true)
    }

    @Test func resolvedCallbackFailureEvictsTheInstance() {
        let log = EventLog()
        let container = Container()
        container.register(Tracked.self, reuse: .singleton) { Tracked("t", log: log) }
            .resolved { _, _ in
                log.append("resolved")
                if log.count(of: "resolved") == 1 { throw Boom() }
            }
        let error = #expect(throws: ResolutionError.self) { try container.require(Tracked.self) }
        #expect(error?.code == .factoryFailed)
        #expect(log.events == ["resolved", "dispose t"], "the instance that failed its callback is disposed, not cached")
        #expect(container.resolve(Tracked.self) != nil)
        #expect(log.count(of: "resolved") == 2)
    }

    @Test func aCallbackThatDisposesItsScopeAndFailsLeavesOneDisposal() {
        let log = EventLog()
        let container = Container()
        container.register(Tracked.self, reuse: .inScope) { Tracked("t", log: log) }
            .resolved { scope, _ in
                scope.dispose()
                throw Boom()
            }
        let scope = container.openScope("s")
        #expect(throws: ResolutionError.self) { try scope.require(Tracked.self) }
        // The scope's disposal took the instance's record: the failed callback does not dispose it again.
        #expect(log.events == ["dispose t"])
    }

    @Test func aDecoratorThatFailsDisposesWhatTheFactoryMade() {
        let log = EventLog()
        let container = Container()
        container.register(Tracked.self, reuse: .singleton) { Tracked("t", log: log) }
        container.decorate(Tracked.self) { _, _ in throw Boom() }
        let error = #expect(throws: ResolutionError.self) { try container.require(Tracked.self) }
        #expect(error?.code == .factoryFailed)
        // Made by the container and handed to no one: nothing else would dispose it.
        #expect(log.events == ["dispose t"])
        container.dispose()
        #expect(log.events == ["dispose t"])
    }

    @Test func aTransientsCallbackThatFailsDisposesTheInstance() {
        let log = EventLog()
        let container = Container()
        container.register(Tracked.self) { Tracked("t", log: log) }
            .allowDisposableTransient()
            .resolved { _, _ in throw Boom() }
        let error = #expect(throws: ResolutionError.self) { try container.require(Tracked.self) }
        #expect(error?.code == .factoryFailed)
        #expect(log.events == ["dispose t"], "the caller never got it, so the container disposes it")
    }

    @Test func runawayNestingStopsBeforeTheStackDoes() {
        let container = Container()
        for depth in 0..<1_000 {
            container.register(Foo.self, key: depth) { scope in
                _ = try scope.require(Foo.self, key: depth + 1)
                return Foo()
            }
        }
        let error = #expect(throws: ResolutionError.self) { try container.require(Foo.self, key: 0) }
        #expect(error?.code == .resolutionTooDeep)
        #expect(error?.path.count == ResolutionError.maximumDepth + 1)
        #expect(error?.description.hasPrefix("Stimpak stopped resolving Foo[key: 128]: more than 128 resolutions nested") == true)
    }

    @Test func registrationErrorMessage() {
        let container = Container()
        container.register(Foo.self, key: "A") { Foo() }
        let error = #expect(throws: RegistrationError.self) {
            try container.register(Foo.self, key: "A", ifAlreadyRegistered: .throw) { Foo() }
        }
        #expect(error?.description == #"Stimpak already has a registration for Foo[key: "A"]. Fix: register with ifAlreadyRegistered: .replace to replace it, unregister it first, or register under another key."#)
    }

    @Test("a registration refused by .throw or .skip leaves the first one in place")
    func refusedRegistrationKeepsTheFirst() throws {
        let container = Container()
        let first = Foo()
        container.register(Foo.self, key: "A", reuse: .transient) { first }
        #expect(throws: RegistrationError.self) {
            try container.register(Foo.self, key: "A", ifAlreadyRegistered: .throw) { Foo() }
        }
        #expect(try container.require(Foo.self, key: "A") === first)
        container.register(Foo.self, key: "A", ifAlreadyRegistered: .skip) { Foo() }
        #expect(try container.require(Foo.self, key: "A") === first)
        #expect(container.registrations.count == 1)
    }

    @Test func disposalFailureMessage() {
        let container = Container()
        container.register(Foo.self, reuse: .singleton) { Foo() }.onDispose { _ in throw Boom() }
        _ = container.resolve(Foo.self)
        let failures = container.dispose()
        #expect(failures.map(\.description) == ["Disposing Foo threw: boom. The other instances were still disposed."])
    }

    @Test func providedValueWantedByASingletonSaysWhyItIsNotSeen() {
        struct Request: Sendable { let id: Int }
        final class Audit: Sendable {
            init(_ request: Request) {}
        }
        let container = Container()
        container.autowire(Audit.self, reuse: .singleton, Audit.init)
        let scope = container.openScope("request")
        scope.provide(Request(id: 1))
        let error = #expect(throws: ResolutionError.self) { try scope.require(Audit.self) }
        #expect(error?.code == .notRegistered)
        let message = error?.description ?? ""
        #expect(message.contains("A value of it was put into a scope with provide(_:)"))
        #expect(message.contains("the container's root scope"))
        #expect(message.contains("Fix: make the service that needs it .inScope"))
        #expect(!message.contains("Fix: register it, e.g."))
    }
}
