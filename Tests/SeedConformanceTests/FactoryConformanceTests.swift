import Foundation
import Stimpak
import StimpakTestSupport
import Testing

// Factory's README and documentation (hmlongco/Factory: Scopes, Resolutions, Testing, the property wrappers'
// doc comments), ported through the Factory migration guide (MigratingFromFactory.md): each test names the
// rows it exercises.

@Suite struct FactoryConformanceTests {
    protocol MyServiceType: AnyObject, Sendable {
        var text: String { get }
    }

    final class MyService: MyServiceType {
        let text = "real"
    }

    final class MockService: MyServiceType {
        let text = "mock"
    }

    /// Factory's `MyConstructedService(service: myService())`: constructor injection.
    final class MyConstructedService: Sendable {
        let service: any MyServiceType
        init(service: any MyServiceType) { self.service = service }
    }

    /// A container of the README's services whose factories count what they make.
    static func appContainer(made: Made = Made()) -> Container {
        let container = Container()
        container.register((any MyServiceType).self) { () -> any MyServiceType in
            made.increment()
            return MyService()
        }
        container.register(MyConstructedService.self) { scope in MyConstructedService(service: try scope.require()) }
        return container
    }

    /// "A Simple Example": a factory is not evaluated until asked for, and without a scope every call makes a
    /// new instance; a factory resolves its dependencies from the container. Rows:
    /// `var api: Factory<Api> { self { Api() } }`, `Container.shared.api()`.
    @Test func simpleExample() throws {
        let made = Made()
        let container = Self.appContainer(made: made)
        #expect(made.value == 0, "registering makes nothing")
        let a = try container.require((any MyServiceType).self)
        let b = try container.require((any MyServiceType).self)
        #expect(a !== b, "unique: the default scope")
        #expect(a.text == "real")
        #expect(try container.require(MyConstructedService.self).service.text == "real")
        #expect(made.value == 3)

        // `Container.shared.myService()` and the global `resolve(\.myService)`: the designated container.
        try DefaultContainerAccess.run {
            Container.default = container
            let viaInject = try inject((any MyServiceType).self)
            #expect(viaInject.text == "real")
            #expect(try Container.default?.require((any MyServiceType).self).text == "real")
        }
    }

    /// Scopes: `.singleton` and `.cached` give one instance to every resolve; `.unique` a new one each time.
    /// Factory's singleton is global, shared even by two containers; Stimpak's is one per container, as
    /// Factory's `.cached` is. Row: `.singleton` / `.cached` / `.shared` / `.unique`.
    @Test func singletonCachedAndUnique() throws {
        let one = Container()
        let two = Container()
        for container in [one, two] {
            container.register((any MyServiceType).self, reuse: .singleton) { MyService() as any MyServiceType }
            container.register(MyService.self, reuse: .inScope) { MyService() }
            container.register(MockService.self, reuse: .transient) { MockService() }
        }
        #expect(try one.require((any MyServiceType).self) === one.require((any MyServiceType).self))
        #expect(try one.require((any MyServiceType).self) !== two.require((any MyServiceType).self), "one per container")
        // "If we create two instances of the above container and resolve cachedService from both, we'll get two
        // different instances of the service."
        #expect(try one.require(MyService.self) === one.require(MyService.self))
        #expect(try one.require(MyService.self) !== two.require(MyService.self))
        #expect(try one.require(MockService.self) !== one.require(MockService.self), ".unique: a new one each time")
    }

    /// `.shared`: "exist just as long as someone holds a strong reference to them"; resolving once they are
    /// gone makes a new instance. Row: `.shared` → `.weak`.
    @Test func shared() throws {
        let made = Made()
        let container = Container()
        container.register(MyService.self, reuse: .weak) { () -> MyService in
            made.increment()
            return MyService()
        }
        var a: MyService? = try container.require(MyService.self)
        var b: MyService? = try container.require(MyService.self)
        #expect(a === b)
        #expect(made.value == 1)
        a = nil
        b = nil
        Container.reclaim()
        let c = try container.require(MyService.self)
        #expect(made.value == 2, "the last strong reference went away: a new instance")
        _ = (a, b, c)
    }

    /// The graph scope: `ProtocolConsumer`'s two `@Injected` properties get one `MyService` when Factory makes
    /// the consumer, and two when the consumer is made by hand ("two separate and distinct resolution
    /// cycles"). Row: `.graph`.
    @Test func graph() throws {
        try DefaultContainerAccess.run {
            let container = Container()
            container.register(MyService.self, reuse: .graph) { MyService() }
            container.register(IDProviding.self) { scope in IDProviding(service: try scope.require()) }
            container.register(ValueProviding.self) { scope in ValueProviding(service: try scope.require()) }
            container.register(ProtocolConsumer.self) { ProtocolConsumer() }
            Container.default = container

            let consumer = try container.require(ProtocolConsumer.self)
            #expect(consumer.ids.service === consumer.values.service, "one resolution cycle: one MyService")
            let byHand = ProtocolConsumer()
            #expect(byHand.ids.service !== byHand.values.service, "made by hand: two resolution cycles")
        }
    }

    final class IDProviding: Sendable {
        let service: MyService
        init(service: MyService) { self.service = service }
    }

    final class ValueProviding: Sendable {
        let service: MyService
        init(service: MyService) { self.service = service }
    }

    final class ProtocolConsumer {
        @Injected var ids: IDProviding
        @Injected var values: ValueProviding
    }

    /// Custom scopes: `AuthenticatedUser` and `ProfileImageCache` share one instance each "up until the point
    /// where the session scope is reset, perhaps by a user logging out". Row: `.scope(.session)`,
    /// `manager.reset(scope: .session)`.
    @Test func customSessionScope() throws {
        struct Session: Hashable { let user: Int }
        final class AuthenticatedUser: Sendable {}
        final class ProfileImageCache: Sendable {}
        let container = Container()
        container.register(AuthenticatedUser.self, reuse: .scopedTo(Session.self)) { AuthenticatedUser() }
        container.register(ProfileImageCache.self, reuse: .scopedTo(Session.self)) { ProfileImageCache() }

        var session = container.openScope(Session(user: 1))
        let screen = session.openScope()
        let user = try screen.require(AuthenticatedUser.self)
        #expect(try session.require(AuthenticatedUser.self) === user, "one per session, whichever scope below asks")
        #expect(try screen.require(ProfileImageCache.self) === session.require(ProfileImageCache.self))

        session.dispose()  // logout()
        session = container.openScope(Session(user: 1))
        #expect(try session.require(AuthenticatedUser.self) !== user, "a new session after the reset")
        session.dispose()
    }

    /// The default scope: `manager.defaultScope = .cached` applies to every factory that names no scope. Row:
    /// `manager.defaultScope`.
    @Test func defaultScope() throws {
        let container = Container(defaultReuse: .inScope)
        container.register(MyService.self) { MyService() }
        container.register(MockService.self, reuse: .transient) { MockService() }  // an explicit scope wins
        #expect(try container.require(MyService.self) === container.require(MyService.self))
        #expect(try container.require(MockService.self) !== container.require(MockService.self))
    }

    /// `ParameterFactory`: the factory receives the parameter; a scoped one caches the first value's instance
    /// "even if other values are passed", unless `.scopeOnParameters`. Row: `ParameterFactory`.
    @Test func parameterFactory() throws {
        final class ParameterService: Sendable {
            let value: Int
            init(value: Int) { self.value = value }
        }
        let container = Container()
        container.register(ParameterService.self) { (value: Int) in ParameterService(value: value) }
        #expect(try container.require(ParameterService.self, 1).value == 1)
        #expect(try container.require(ParameterService.self, 2).value == 2)

        container.register(ParameterService.self, reuse: .inScope, key: "cached") { (value: Int) -> ParameterService in
            ParameterService(value: value)
        }
        #expect(try container.require(ParameterService.self, 1, key: "cached").value == 1)
        #expect(try container.require(ParameterService.self, 2, key: "cached").value == 1, "the first value's instance")

        let perValue = container.register(ParameterService.self, reuse: .inScope, key: "per value") { (value: Int) in
            ParameterService(value: value)
        }
        perValue.compareArgsByValue()  // .scopeOnParameters
        let first = try container.require(ParameterService.self, 1, key: "per value")
        #expect(try container.require(ParameterService.self, 2, key: "per value").value == 2)
        #expect(try container.require(ParameterService.self, 1, key: "per value") === first)
    }

    /// `@Injected`: "resolved on initialization: the referenced dependencies will be acquired when the parent
    /// class is created". Row: `@Injected(\.api) var api`.
    @Test func injectedResolvesWhenTheOwnerIsMade() {
        DefaultContainerAccess.run {
            let made = Made()
            let container = Self.appContainer(made: made)
            Container.default = container
            final class ContentViewModel {
                @Injected var myService: any MyServiceType
            }
            let model = ContentViewModel()
            #expect(made.value == 1, "resolved when the model was made, before any read")
            #expect(model.myService.text == "real")
            #expect(made.value == 1)
        }
    }

    /// `@LazyInjected`: "resolved the first time the dependency is referenced by the code, and not on
    /// initialization", then kept. `@WeakLazyInjected`: the same, held weakly: "it must exist elsewhere". Row:
    /// `@LazyInjected`, `@WeakLazyInjected`.
    @Test func lazyAndWeakLazyInjected() throws {
        try DefaultContainerAccess.run {
            let made = Made()
            let container = Self.appContainer(made: made)
            container.register(MyService.self, reuse: .weak) { MyService() }
            Container.default = container
            final class ContentViewModel {
                @LazyInjected var myService: any MyServiceType
                @WeakInjected var parent: MyService?
            }
            let model = ContentViewModel()
            #expect(made.value == 0, "not resolved on initialization")
            let first = model.myService
            #expect(made.value == 1)
            #expect(model.myService === first, "resolved once")

            var strong: MyService? = try container.require(MyService.self)
            #expect(model.parent === strong, "resolved on first access, the instance held elsewhere")
            strong = nil
            Container.reclaim()
            #expect(model.parent == nil, "held weakly")
            _ = strong
        }
    }

    /// Testing: registering a mock replaces the factory for what is resolved afterwards, however deep in the
    /// chain ("Diving Deeper": the view model's loader's network), and a cached instance gives way to it; tests
    /// running in parallel do not see each other's mocks (Factory's `.container` test trait). Row:
    /// `Container.shared.api.register { MockApi() }` in a test.
    @Test func registeringAMockInATest() async throws {
        let container = Container()
        container.register(Networking.self, reuse: .singleton) { Networking(json: "live") }
        container.register(AccountLoader.self, reuse: .inScope) { scope in AccountLoader(network: try scope.require()) }
        container.register(AccountsViewModel.self) { scope in AccountsViewModel(loader: try scope.require()) }
        let live = try await container.require(Networking.self)  // cached before the tests register their mocks

        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<8 {
                group.addTask {
                    try await container.withScope("test \(index)") { test in
                        test.register(Networking.self, reuse: .singleton) { Networking(json: #"{ "accounts": [\#(index)] }"#) }
                        let model = try await test.require(AccountsViewModel.self)
                        #expect(model.loader.network.json == #"{ "accounts": [\#(index)] }"#, "this test's mock, three levels down")
                        #expect(try await test.require(Networking.self) !== live)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await container.require(AccountsViewModel.self).loader.network === live, "the app's container is unchanged")
    }

    final class Networking: Sendable {
        let json: String
        init(json: String) { self.json = json }
    }

    final class AccountLoader: Sendable {
        let network: Networking
        init(network: Networking) { self.network = network }
    }

    final class AccountsViewModel: Sendable {
        let loader: AccountLoader
        init(loader: AccountLoader) { self.loader = loader }
    }

    /// Testing: `push()` before a test and `pop()` after it, or `reset()`, put the container back as it was:
    /// the mocks are gone and cached instances are made again. Row: `Container.shared.manager.reset()`.
    @Test func resettingAfterATest() throws {
        final class Cache: Disposable, @unchecked Sendable {  // `isDisposed` is set once, by the disposal
            var isDisposed = false
            func dispose() { isDisposed = true }
        }
        let container = Container()
        container.register((any MyServiceType).self) { MyService() as any MyServiceType }
        container.register(Cache.self, reuse: .inScope) { Cache() }

        let test = container.openScope("a test")
        test.register((any MyServiceType).self) { MockService() as any MyServiceType }
        #expect(try test.require((any MyServiceType).self).text == "mock")
        let cached = try test.require(Cache.self)
        test.dispose()  // pop() / reset()
        #expect(cached.isDisposed)

        let next = container.openScope("a test")
        defer { next.dispose() }
        #expect(try next.require((any MyServiceType).self).text == "real", "the mock went with the scope")
        #expect(try next.require(Cache.self) !== cached, "the cache starts empty")
    }

    /// Property wrappers in an object that a test's scope makes see that scope's mocks, as Factory's view model
    /// made by `Container.shared.contentViewModel()` injects the mock registered before it, even when the app
    /// designated its container for the property wrappers. Rows: `Container.shared.api.register { MockApi() }`
    /// in a test, `@Injected(\.api) var api`.
    @Test func injectedPropertiesSeeTheTestsMock() throws {
        final class ContentViewModel {
            @Injected var myService: any MyServiceType
        }
        let container = Self.appContainer()
        container.register(ContentViewModel.self) { ContentViewModel() }
        let test = container.openScope("a test")
        defer { test.dispose() }
        test.register((any MyServiceType).self) { MockService() as any MyServiceType }
        try DefaultContainerAccess.run {
            Container.default = container
            let model = try test.require(ContentViewModel.self)
            #expect(model.myService.text == "mock", "the factory ran for the test's scope")
            #expect(ContentViewModel().myService.text == "real", "made outside: the default container's")
        }
    }
}
