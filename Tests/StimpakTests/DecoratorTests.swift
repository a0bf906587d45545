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

    // MARK: Every layer of a decorated instance is disposed

    protocol Store: AnyObject, Sendable {}
    /// What a factory makes: it disposes itself.
    final class DisposableStore: Store, Disposable {
        let log: EventLog
        init(log: EventLog) { self.log = log }
        func dispose() { log.append("dispose store") }
    }
    /// The same, disposing itself asynchronously.
    final class AsyncDisposableStore: Store, AsyncDisposable {
        let log: EventLog
        init(log: EventLog) { self.log = log }
        func dispose() async { log.append("dispose async store") }
    }
    /// A wrapper that does not dispose itself.
    final class PlainWrapper: Store {
        let inner: any Store
        init(_ inner: any Store) { self.inner = inner }
    }
    /// A wrapper that disposes what it holds, and not what it wraps.
    final class AuditWrapper: Store, Disposable {
        let inner: any Store
        let log: EventLog
        init(_ inner: any Store, log: EventLog) {
            self.inner = inner
            self.log = log
        }
        func dispose() { log.append("dispose audit") }
    }

    @Test(arguments: [Reuse.singleton, Reuse.inScope])
    func everyDisposableLayerIsDisposedOnceOutermostFirst(reuse: Reuse) {
        let log = EventLog()
        let container = Container()
        container.register((any Store).self, reuse: reuse) { DisposableStore(log: log) as any Store }
        container.decorate((any Store).self) { _, inner in PlainWrapper(inner) }
        // A decorator that hands back the instance it got adds no layer: that instance is disposed once.
        container.decorate((any Store).self) { _, inner in inner }
        container.decorate((any Store).self) { _, inner in AuditWrapper(inner, log: log) }
        let scope = container.openScope("request")
        #expect(scope.resolve((any Store).self) is AuditWrapper)
        #expect(scope.dispose().isEmpty)
        #expect(container.dispose().isEmpty)
        #expect(log.events == ["dispose audit", "dispose store"])
    }

    @Test func anAsyncDisposableUnderADecoratorIsDisposed() async throws {
        let log = EventLog()
        let container = Container()
        container.register((any Store).self, reuse: .singleton) { () async in AsyncDisposableStore(log: log) as any Store }
        container.decorate((any Store).self) { _, inner in AuditWrapper(inner, log: log) }
        _ = try await container.require((any Store).self)
        #expect(await container.dispose().isEmpty)
        #expect(log.events == ["dispose audit", "dispose async store"])
    }

    @Test func aFailingDecoratorDisposesEveryLayerMadeBeforeIt() {
        let log = EventLog()
        let container = Container()
        container.register((any Store).self, reuse: .singleton) { DisposableStore(log: log) as any Store }
        container.decorate((any Store).self) { _, inner in AuditWrapper(inner, log: log) }
        container.decorate((any Store).self) { _, _ in throw Boom() }
        #expect(container.resolve((any Store).self) == nil)
        #expect(log.events == ["dispose audit", "dispose store"])
    }

    /// A transient whose outermost layer is not `Disposable` but holds one that is: the disposable-transient rule
    /// applies to it as to a `Disposable` instance.
    @Test func aTransientsDisposableLayerUnderAPlainWrapperFollowsTheTransientRule() throws {
        let log = EventLog()
        let container = Container()
        container.register((any Store).self) { DisposableStore(log: log) as any Store }.trackDisposableTransients()
        container.decorate((any Store).self) { _, inner in PlainWrapper(inner) }
        let scope = container.openScope("request")
        #expect(try scope.require((any Store).self) is PlainWrapper)
        #expect(scope.dispose().isEmpty)
        #expect(log.events == ["dispose store"], "tracked: disposed with the scope")

        let refusing = Container()
        refusing.register((any Store).self) { DisposableStore(log: log) as any Store }
        refusing.decorate((any Store).self) { _, inner in PlainWrapper(inner) }
        let error = #expect(throws: ResolutionError.self) { try refusing.require((any Store).self) }
        #expect(error?.code == .disposableTransient)
        #expect(error?.description.contains("an instance its decorators wrap is Disposable") == true)
        #expect(log.events == ["dispose store", "dispose store"], "refused: disposed at once")
    }

    @Test func aFailingCallbackDisposesEveryLayer() {
        let log = EventLog()
        let container = Container()
        container.register((any Store).self) { DisposableStore(log: log) as any Store }
            .resolved { _, _ in throw Boom() }
        container.decorate((any Store).self) { _, inner in PlainWrapper(inner) }
        #expect(container.resolve((any Store).self) == nil)
        #expect(log.events == ["dispose store"])
    }
}
