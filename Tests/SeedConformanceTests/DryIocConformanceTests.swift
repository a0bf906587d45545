import Foundation
import Stimpak
import Testing

// DryIoc's documentation (dadhi/DryIoc docs: Register and Resolve, Reuse and Scopes, Decorators, Error
// Detection and Resolution, Rules and Default Conventions), its examples ported through the DryIoc migration
// guide (MigratingFromDryIoc.md): each test names the rows it exercises.

@Suite struct DryIocConformanceTests {
    protocol IService: AnyObject, Sendable {}
    protocol ICommand: Sendable {}
    final class SomeService: IService, Instantiable {}

    protocol IClient: Sendable {
        var service: any IService { get }
    }

    final class SomeClient: IClient {
        let service: any IService
        init(service: any IService) { self.service = service }
    }

    /// A disposable that records, in `log`, that it was disposed.
    final class Recorded: Disposable, @unchecked Sendable {  // `isDisposed` is set once, by its disposal
        let name: String
        let log: DisposalLog?
        private(set) var isDisposed = false
        init(_ name: String, log: DisposalLog? = nil) { (self.name, self.log) = (name, log) }
        func dispose() {
            isDisposed = true
            log?.append(name)
        }
    }

    final class DisposalLog: @unchecked Sendable {  // `names` is guarded by `lock`
        private let lock = NSLock()
        private var names: [String] = []
        func append(_ name: String) { lock.withLock { names.append(name) } }
        var order: [String] { lock.withLock { names } }
    }

    /// "Registering as Singleton": the client is transient, its service one instance per container; "One
    /// level deep registration API": resolving `IA` makes an `A`. Row: `Register<IA, A>(Reuse.Singleton)`.
    @Test func registeringAsSingleton() throws {
        let container = Container()
        container.register((any IService).self, implementation: SomeService.self, reuse: .singleton)
        container.autowire((any IClient).self, SomeClient.init)
        let one = try container.require((any IClient).self)
        let two = try container.require((any IClient).self)
        #expect(one.service === two.service)
        #expect(one.service is SomeService)
    }

    /// "Reuse.Scoped": an instance per scope, disposed with it; nested scopes each have their own ("Nested
    /// scopes without scope context"); the service's factory receives the scope it is made in ("Implicitly
    /// available services": `x.Resolver` is the scope). DryIoc throws when a scoped service is resolved
    /// without an open scope; Stimpak's root scope is a scope too, so the container has one (DryIoc's
    /// `Reuse.ScopedOrSingleton`). Row: `Reuse.Scoped`.
    @Test func scoped() throws {
        final class Car: Disposable, @unchecked Sendable {  // both set once: at creation, by the disposal
            let madeIn: Scope
            var isDisposed = false
            init(madeIn: Scope) { self.madeIn = madeIn }
            func dispose() { isDisposed = true }
        }
        let container = Container()
        container.register(Car.self, reuse: .inScope) { scope in Car(madeIn: scope) }

        let car = try container.withScope { scope in
            let car = try scope.require(Car.self)
            #expect(try scope.require(Car.self) === car)
            #expect(car.madeIn === scope, "the factory receives the scope")
            return car
        }
        #expect(car.isDisposed, "disposed with the scope")

        let s1 = container.openScope()
        let s2 = s1.openScope()
        let s3 = s2.openScope()
        #expect(try s1.require(Car.self) === s1.require(Car.self))
        #expect(try s1.require(Car.self) !== s2.require(Car.self))
        #expect(try s2.require(Car.self) !== s3.require(Car.self))
        s1.dispose()

        #expect(try container.require(Car.self) === container.require(Car.self), "the root scope's own")
    }

    /// "Reuse.ScopedTo(name)": resolving from a nested scope finds the nearest scope with the name, up the
    /// chain; with none, it is an error. Row: `Reuse.ScopedTo(name)`.
    @Test func scopedToName() throws {
        final class Car: Sendable {}
        struct Tenant: Hashable { let id: Int }
        let container = Container()
        container.register(Car.self, reuse: .scopedTo("top")) { Car() }
        container.register(Car.self, reuse: .scopedTo(Tenant.self), key: "tenant") { Car() }

        try container.withScope("top") { s1 in
            let car1 = try s1.require(Car.self)
            let car2 = try s1.withScope { s2 in try s2.require(Car.self) }
            #expect(car2 === car1, "made in the matching scope `s1`")
        }
        let error = try #require(throws: ResolutionError.self) { try container.openScope().require(Car.self) }
        #expect(error.code == .noMatchingScope)

        // `ScopedTo(params object[] names)` stops at any of the names: `.scopedTo(Key.self)` at any key of a type.
        let tenant = container.openScope(Tenant(id: 1))
        defer { tenant.dispose() }
        #expect(try tenant.openScope().require(Car.self, key: "tenant") === tenant.require(Car.self, key: "tenant"))
    }

    /// `OpenScope(name)` returns a scope to resolve from, and disposing it (`using`) disposes its instances;
    /// scopes nest. Row: `OpenScope(name)`.
    @Test func openScope() throws {
        let container = Container()
        container.register(Recorded.self, reuse: .inScope) { Recorded("car") }
        let named = container.openScope("request")
        #expect(container.openScope("request") === named, "the open scope with that name")
        let car = try named.require(Recorded.self)
        named.dispose()
        #expect(car.isDisposed)

        let carInUsing = try container.withScope { scope in try scope.require(Recorded.self) }
        #expect(carInUsing.isDisposed, "withScope disposes as `using` does")
    }

    /// `Made.Of(() => new A(Arg.Of<B>()))`: the constructor's parameters are resolved from the container.
    /// Row: `Made.Of(…)`.
    @Test func madeOf() throws {
        let container = Container()
        container.register((any IService).self, implementation: SomeService.self, reuse: .singleton)
        container.autowire(SomeClient.self, SomeClient.init(service:))
        let client = try container.require(SomeClient.self)
        #expect(client.service === (try container.require((any IService).self)))
    }

    /// "Multiple keyed registrations": `Resolve<ICommand[]>()` and `ResolveMany<ICommand>()` return every
    /// registration, whatever its key; DryIoc returns its default ones in registration order. DryIoc also
    /// appends a second registration without a key (`IfAlreadyRegistered.AppendNotKeyed`); Stimpak keeps the
    /// first, so several implementations take keys. Row: `ResolveMany<IA>()`.
    @Test func resolveMany() throws {
        struct GetCommand: ICommand {}
        struct SetCommand: ICommand {}
        struct DeleteCommand: ICommand {}
        enum CommandId: Hashable { case get, set, delete }
        let container = Container()
        container.register((any ICommand).self, key: CommandId.get) { GetCommand() as any ICommand }
        container.register((any ICommand).self, key: CommandId.set) { SetCommand() as any ICommand }
        container.register((any ICommand).self, key: CommandId.delete) { DeleteCommand() as any ICommand }
        let commands = container.resolveAll((any ICommand).self)
        #expect(commands.count == 3)
        #expect(commands[0] is GetCommand && commands[1] is SetCommand && commands[2] is DeleteCommand, "registration order")
        #expect(try container.require([any ICommand].self).count == 3)
        #expect(try container.require((any ICommand).self, key: CommandId.set) is SetCommand)

        let unkeyed = Container()
        unkeyed.register(String.self) { "copy" }
        unkeyed.register(String.self) { "paste" }
        #expect(unkeyed.resolveAll(String.self) == ["copy"], "a second registration without a key is not added")
    }

    /// "Decorators": the resolved handler is the decorator, which logs around the decorated service; "Nested
    /// decorators": the first registered wraps the service, the next wraps that (`D2(D1(S))`); a decorator
    /// of a keyed service (`Setup.DecoratorOf(decorateeServiceKey:)`). Row: `Register<IA, ADecorator>(setup:
    /// Setup.Decorator)`.
    @Test func decorators() throws {
        let container = Container()
        container.register(InMemoryLogger.self, reuse: .singleton) { InMemoryLogger() }
        container.register((any IHandler).self) { FooHandler() as any IHandler }
        container.register((any IHandler).self, key: "foo") { FooHandler() as any IHandler }
        container.decorate((any IHandler).self) { scope, handler in
            LoggingHandlerDecorator(handler, logger: try scope.require(InMemoryLogger.self)) as any IHandler
        }
        let handler = try container.require((any IHandler).self)
        #expect(handler is LoggingHandlerDecorator)
        handler.handle()
        #expect(handler.isHandled)
        #expect(try container.require(InMemoryLogger.self).lines == ["About to handle", "Successfully handled"])

        let nested = Container()
        nested.register(Layer.self) { Layer("S") }
        nested.decorate(Layer.self) { _, inner in Layer("D1", inner) }
        nested.decorate(Layer.self) { _, inner in Layer("D2", inner) }
        #expect(try nested.require(Layer.self).description == "D2(D1(S))")

        let keyed = Container()
        keyed.register(Layer.self, key: "foo") { Layer("foo") }
        keyed.register(Layer.self, key: "boo") { Layer("boo") }
        keyed.decorate(Layer.self, key: "foo") { _, inner in Layer("D", inner) }
        #expect(try keyed.require(Layer.self, key: "foo").description == "D(foo)")
        #expect(try keyed.require(Layer.self, key: "boo").description == "boo")
    }

    /// "Decorator Reuse": a decorator has the reuse of what it decorates (DryIoc's `useDecorateeReuse: true`),
    /// so a singleton is decorated once and every resolve returns the decorated instance. Row:
    /// `Register<IA, ADecorator>(setup: Setup.Decorator)`.
    @Test func decoratorFollowsTheDecorateesReuse() throws {
        let decorated = Made()
        let container = Container()
        container.register(Layer.self, reuse: .singleton) { Layer("S") }
        container.decorate(Layer.self) { _, inner in
            decorated.increment()
            return Layer("D1", inner)
        }
        #expect(try container.require(Layer.self) === container.require(Layer.self))
        #expect(decorated.value == 1)
    }

    /// Disposing a decorated instance disposes the decorator and the decorated, each once, outermost first
    /// (DryIoc disposes in reverse registration order, and a decorator is registered after what it
    /// decorates). The note below the table.
    @Test func decoratedLayersAreDisposedOutermostFirst() throws {
        let log = DisposalLog()
        let container = Container()
        container.register(Recorded.self, reuse: .inScope) { Recorded("service", log: log) }
        container.decorate(Recorded.self) { _, _ in Recorded("decorator", log: log) }
        let scope = container.openScope()
        _ = try scope.require(Recorded.self)
        scope.dispose()
        #expect(log.order == ["decorator", "service"])
    }

    /// "Service Registrations Diagnostics": `Validate()` reports the service whose dependency is missing,
    /// without making anything; "Using Validate to check for Captive Dependency": a scoped `Foo` needing a
    /// singleton `Bar` needing a scoped `Buz` is reported. Row: `Validate()`.
    @Test func validate() throws {
        let made = Made()
        let container = Container()
        container.autowire(MyService.self) { (dependency: RequiredDependency) in
            made.increment()
            return MyService(dependency)
        }
        let report = container.validate()
        #expect(report.problems.count == 1)
        #expect(report.problems.first?.requested == ServiceKey(service: RequiredDependency.self))
        #expect(report.problems.first?.description.contains("MyService") == true)
        #expect(made.value == 0, "nothing is made")
        #expect(throws: ValidationReport.self) { try container.requireValid() }

        // DryIoc sees a constructor's parameters; a closure's dependencies are known once declared.
        container.register(SomeClient.self) { scope in SomeClient(service: try scope.require((any IService).self)) }
        #expect(container.validate().unchecked == [ServiceKey(service: SomeClient.self)])
        container.register(SomeClient.self, key: "declared") { scope in SomeClient(service: try scope.require((any IService).self)) }
            .dependsOn((any IService).self)
        #expect(container.validate().problems.contains { $0.requested == ServiceKey(service: (any IService).self) })

        let captive = Container()
        captive.autowire(Foo.self, reuse: .inScope, Foo.init)
        captive.autowire(Bar.self, reuse: .singleton, Bar.init)
        captive.autowire(Buz.self, reuse: .inScope, Buz.init)
        let problems = captive.validate().problems
        #expect(problems.map(\.code) == [.captiveDependency])
    }

    /// "Reuse lifespan diagnostics": a singleton `Mercedes` whose `Wheels` are scoped throws when resolved;
    /// a transient dependency is no captive. Row: captive dependency errors.
    @Test func captiveDependency() throws {
        final class Wheels: Sendable {}
        final class Mercedes: Sendable {
            let wheels: Wheels
            init(wheels: Wheels) { self.wheels = wheels }
        }
        let container = Container()
        container.autowire(Mercedes.self, reuse: .singleton, Mercedes.init)
        container.register(Wheels.self, reuse: .inScope) { Wheels() }
        let error = try container.withScope { scope in
            try #require(throws: ResolutionError.self) { try scope.require(Mercedes.self) }
        }
        #expect(error.code == .captiveDependency)

        let transient = Container()
        transient.autowire(Mercedes.self, reuse: .singleton, Mercedes.init)
        transient.register(Wheels.self) { Wheels() }
        #expect(throws: Never.self) { try transient.withScope { scope in try scope.require(Mercedes.self) } }
    }

    /// "Disposable Transient": a transient `IDisposable` is refused by default (DryIoc refuses it when it
    /// is registered, Stimpak when its first instance shows it is one: what the factory returns, as DryIoc
    /// looks at the implementation type); `allowDisposableTransient` hands it to the caller to dispose;
    /// "Tracking disposable transient": the scope that resolves it disposes it. Row:
    /// `allowDisposableTransient`, `trackDisposableTransient`.
    @Test func disposableTransients() throws {
        final class XUser: Sendable {
            let x: Recorded
            init(x: Recorded) { self.x = x }
        }
        final class DisposableCommand: ICommand, Disposable {
            func dispose() {}
        }
        let refused = Container()
        refused.register((any ICommand).self) { DisposableCommand() as any ICommand }
        let error = try #require(throws: ResolutionError.self) { try refused.require((any ICommand).self) }
        #expect(error.code == .disposableTransient)

        let allowed = Container()
        allowed.register(Recorded.self) { Recorded("x") }.allowDisposableTransient()
        let x = try allowed.withScope { scope in try scope.require(Recorded.self) }
        #expect(!x.isDisposed, "the caller disposes it")

        let tracked = Container()
        tracked.register(Recorded.self) { Recorded("x") }.trackDisposableTransients()
        tracked.autowire(XUser.self, XUser.init)
        let user = try tracked.withScope { scope in try scope.require(XUser.self) }
        #expect(user.x.isDisposed, "disposed with the scope that resolved it")
    }

    /// "RegisterInstance": the container injects the instance it was given. Row: `RegisterInstance(a)`.
    @Test func registerInstance() throws {
        let container = Container()
        let a = SomeService()
        container.register((any IService).self, instance: a)
        container.autowire(SomeClient.self, SomeClient.init(service:))
        #expect(try container.require(SomeClient.self).service === a)
    }

    /// "Method Use to add instance directly into scope": a value put into an open scope is injected there,
    /// and one put into the container's own scope everywhere else. Row: `scope.Use(a)`.
    @Test func useAnInstanceInAScope() throws {
        let container = Container()
        container.autowire(SomeClient.self, SomeClient.init(service:))
        let a = SomeService()
        let client = try container.withScope { scope in
            scope.provide(a as any IService)
            return try scope.require(SomeClient.self)
        }
        #expect(client.service === a)
        let anotherA = SomeService()
        container.root.provide(anotherA as any IService)
        #expect(try container.require(SomeClient.self).service === anotherA)
    }

    /// `Resolve<T>(args: new object[] { id })` passes runtime values to the constructor, and two resolves
    /// with different values get their own (DryIoc's GHIssue29: "Resolve shall not cache args"). Row:
    /// `Resolve<A>(args: new object[] { … })`.
    @Test func resolveWithArguments() throws {
        final class Implementation: Sendable {
            let id: UUID
            init(id: UUID) { self.id = id }
        }
        let container = Container()
        container.register(Implementation.self) { (id: UUID) in Implementation(id: id) }
        let (id1, id2) = (UUID(), UUID())
        #expect(try container.require(Implementation.self, id1).id == id1)
        #expect(try container.require(Implementation.self, id2).id == id2)
    }

    /// `IfAlreadyRegistered`: `Keep` keeps the first registration (Stimpak's default; DryIoc's is
    /// `AppendNotKeyed`, see ``resolveMany()``), `Replace` replaces it, also for what resolves it afterwards,
    /// `Throw` refuses the second. Row: `IfAlreadyRegistered`.
    @Test func ifAlreadyRegistered() throws {
        final class CopyMenu: Sendable {
            let command: String
            init(command: String) { self.command = command }
        }
        let container = Container()
        container.register(String.self) { "Copy" }
        container.autowire(CopyMenu.self, CopyMenu.init)
        container.register(String.self) { "Paste" }
        #expect(try container.require(CopyMenu.self).command == "Copy", "Keep")

        container.register(String.self, ifAlreadyRegistered: .replace) { "FastCopy" }
        #expect(try container.require(CopyMenu.self).command == "FastCopy", "Replace, after a first resolve")

        #expect(throws: RegistrationError.self) {
            try container.register(String.self, ifAlreadyRegistered: .throw) { "Cut" }
        }
        #expect(try container.require(String.self) == "FastCopy")
    }

    /// Disposal order: DryIoc disposes a scope's instances in the reverse order of their registrations;
    /// Stimpak in the reverse order of their creation, newest first, so that an instance is disposed before
    /// what it was made with. Row: disposal order.
    @Test func disposalOrder() throws {
        let log = DisposalLog()
        let container = Container()
        container.register(Recorded.self, reuse: .inScope, key: "registered first") { Recorded("first", log: log) }
        container.register(Recorded.self, reuse: .inScope, key: "registered second") { Recorded("second", log: log) }
        try container.withScope { scope in
            _ = try scope.require(Recorded.self, key: "registered second")
            _ = try scope.require(Recorded.self, key: "registered first")
        }
        #expect(log.order == ["first", "second"], "newest first (DryIoc: second, first)")
    }
}

extension DryIocConformanceTests {
    protocol IHandler: AnyObject, Sendable {
        var isHandled: Bool { get }
        func handle()
    }

    final class FooHandler: IHandler, @unchecked Sendable {  // `isHandled` is set once, by `handle`
        private(set) var isHandled = false
        func handle() { isHandled = true }
    }

    final class InMemoryLogger: @unchecked Sendable {  // `lines` is guarded by `lock`
        private let lock = NSLock()
        private var stored: [String] = []
        func log(_ line: String) { lock.withLock { stored.append(line) } }
        var lines: [String] { lock.withLock { stored } }
    }

    final class LoggingHandlerDecorator: IHandler {
        private let handler: any IHandler
        let logger: InMemoryLogger
        init(_ handler: any IHandler, logger: InMemoryLogger) { (self.handler, self.logger) = (handler, logger) }
        var isHandled: Bool { handler.isHandled }
        func handle() {
            logger.log("About to handle")
            handler.handle()
            logger.log("Successfully handled")
        }
    }

    /// DryIoc's `S`, `D1(S s)`, `D2(S s)`: a service and decorators of it, described by their nesting.
    final class Layer: Sendable, CustomStringConvertible {
        let name: String
        let inner: Layer?
        init(_ name: String, _ inner: Layer? = nil) { (self.name, self.inner) = (name, inner) }
        var description: String { inner.map { "\(name)(\($0))" } ?? name }
    }

    final class RequiredDependency: Sendable {}
    final class MyService: Sendable {
        init(_ dependency: RequiredDependency) {}
    }

    final class Buz: Sendable { init() {} }
    final class Bar: Sendable { init(buz: Buz) {} }
    final class Foo: Sendable { init(bar: Bar) {} }
}
