import Testing
import Stimpak

/// A `Disposable` transient is refused unless its scope tracks it or the registration allows it.
@Suite struct DisposableTransientTests {
    @Test func refusedAndDisposedByDefault() {
        let log = EventLog()
        let container = Container()
        container.register(Tracked.self) { Tracked("t", log: log) }
        // Twice: the lock-free path (after the table is published) refuses it too.
        for _ in 0..<2 {
            let error = #expect(throws: ResolutionError.self) { try container.require(Tracked.self) }
            #expect(error?.code == .disposableTransient)
            let message = error?.description ?? ""
            #expect(message.contains("Stimpak refused a Tracked: it is Disposable and registered .transient"))
            #expect(message.contains(".trackDisposableTransients()"))
            #expect(message.contains(".allowDisposableTransient()"))
        }
        #expect(log.events == ["dispose t", "dispose t"], "what it made and refused, it disposed")
    }

    @Test func trackedByTheResolvingScopeAndDisposedWithIt() throws {
        let log = EventLog()
        let container = Container()
        let counter = Counter()
        container.register(Tracked.self) { () -> Tracked in
            counter.increment()
            return Tracked("t\(counter.value)", log: log)
        }
        .trackDisposableTransients()
        let request = container.openScope("request")
        let first = try request.require(Tracked.self)
        let second = try request.require(Tracked.self)
        #expect(first !== second)
        #expect(log.events == [])
        request.dispose()
        #expect(log.events == ["dispose t2", "dispose t1"])
        let error = #expect(throws: ResolutionError.self) { try request.require(Tracked.self) }
        #expect(error?.code == .scopeDisposed)
    }

    @Test func allowedIsHandedOutUndisposed() throws {
        let log = EventLog()
        let container = Container()
        container.register(Tracked.self) { Tracked("t", log: log) }.allowDisposableTransient()
        _ = try container.require(Tracked.self)
        _ = try container.require(Tracked.self)
        container.dispose()
        #expect(log.events == [])
    }

    @Test func anOptionalTransientIsNotJudgedByANil() throws {
        let log = EventLog()
        let made = Counter()
        let container = Container()
        container.register(Tracked?.self) { () -> Tracked? in
            made.next() == 1 ? nil : Tracked("t", log: log)
        }
        #expect(try container.require(Tracked?.self) == nil)
        // The second is a `Tracked`: refused and disposed, on the lock-free path too.
        for _ in 0..<2 {
            let error = #expect(throws: ResolutionError.self) { try container.require(Tracked?.self) }
            #expect(error?.code == .disposableTransient)
        }
        #expect(log.events == ["dispose t", "dispose t"])
        // Validation judges an optional service by its wrapped type.
        #expect(container.validate().problems.map(\.code) == [.disposableTransient])
    }

    @Test func protocolTypedTransientIsJudgedByItsInstance() throws {
        let log = EventLog()
        let container = Container()
        container.register(AnyObject.self, key: "plain") { Foo() as AnyObject }
        container.register(AnyObject.self, key: "disposable") { Tracked("t", log: log) as AnyObject }
        #expect(container.resolve(AnyObject.self, key: "plain") != nil)
        #expect(container.resolve(AnyObject.self, key: "disposable") == nil)
    }
}
