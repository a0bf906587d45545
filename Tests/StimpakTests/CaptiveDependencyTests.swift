import Testing
import Stimpak

/// A long-lived service may not keep a shorter-lived one: `captiveDependency`, and the opt-out.
@Suite struct CaptiveDependencyTests {
    final class Session: Sendable {}
    final class Cache: Sendable {
        let session: Session
        init(session: Session) { self.session = session }
    }
    final class Middle: Sendable {
        let session: Session
        init(session: Session) { self.session = session }
    }

    @Test(arguments: [Reuse.singleton, Reuse.eagerSingleton, Reuse.weak])
    func longLivedServiceResolvingAnInScopeOneIsRefused(reuse: Reuse) {
        let container = Container()
        container.register(Session.self, reuse: .inScope) { Session() }
        container.autowire(Cache.self, reuse: reuse, Cache.init)
        // The root's `.inScope` instance already exists: the lock-free path must not hand it over either.
        _ = container.resolve(Session.self)
        let request = container.openScope("request")
        let error = #expect(throws: ResolutionError.self) { try request.require(Cache.self) }
        #expect(error?.code == .captiveDependency)
        #expect(error?.captor == ServiceKey(service: Cache.self))
        #expect(error?.captorReuse == reuse)
        #expect(error?.reuse == .inScope)
        #expect(error?.pathDescription == "Cache → Session")
        let message = error?.description ?? ""
        #expect(message.contains("Stimpak refused to let Cache (\(reuse)) depend on Session (.inScope)"))
        #expect(message.contains("Provider<Session>"))
        #expect(message.contains(".allowCaptiveDependencies()"))
    }

    @Test func aTransientInBetweenIsCapturedToo() {
        let container = Container()
        container.register(Session.self, reuse: .inScope) { Session() }
        container.autowire(Middle.self, Middle.init)
        container.register(Cache.self, reuse: .singleton) { (scope: Scope) in Cache(session: try scope.require(Middle.self).session) }
        let error = #expect(throws: ResolutionError.self) { try container.openScope(1).require(Cache.self) }
        #expect(error?.code == .captiveDependency)
        #expect(error?.pathDescription == "Cache → Middle → Session")
    }

    @Test func optOutKeepsTheRootsInstance() throws {
        let container = Container()
        container.register(Session.self, reuse: .inScope) { Session() }
        container.autowire(Cache.self, reuse: .singleton, Cache.init).allowCaptiveDependencies()
        let cache = try container.openScope(1).require(Cache.self)
        #expect(try cache.session === container.require(Session.self))
    }

    @Test func shorterLivedServicesMayDependOnLongerLivedOnes() throws {
        let container = Container()
        container.register(Session.self, reuse: .singleton) { Session() }
        container.autowire(Cache.self, reuse: .inScope, Cache.init)
        container.autowire(Middle.self, Middle.init)
        let request = container.openScope(1)
        #expect(try request.require(Cache.self).session === request.require(Middle.self).session)
    }

    @Test func providerResolvesWhenNeededFromTheRightScope() throws {
        final class Pool: Sendable {
            let makeSession: Provider<Session>
            init(makeSession: Provider<Session>) { self.makeSession = makeSession }
        }
        let container = Container()
        container.register(Session.self, reuse: .inScope) { Session() }
        container.autowire(Pool.self, reuse: .singleton, Pool.init)
        let pool = try container.openScope(1).require(Pool.self)
        #expect(try pool.makeSession() === container.require(Session.self))
    }
}
