import Testing
import Stimpak

/// `Module` and `install`.
@Suite struct ModuleTests {
    final class Client: Sendable {}
    final class API: Sendable {
        let client: Client
        init(client: Client) { self.client = client }
    }

    struct NetworkingModule: Module {
        func register(in container: Container) {
            container.register(Client.self, reuse: .singleton) { Client() }
        }
    }

    struct FeatureModule: Module {
        func register(in container: Container) {
            container.autowire(API.self, API.init)
        }
    }

    @Test(arguments: [false, true])
    func modulesThatDependOnEachOtherInstallInAnyOrder(reversed: Bool) throws {
        let container = Container()
        let modules: [any Module] = [FeatureModule(), NetworkingModule()]
        container.install(reversed ? modules.reversed() : modules)
        let api = try container.require(API.self)
        #expect(try api.client === container.require(Client.self))
    }

    @Test func variadicInstall() {
        let container = Container()
        container.install(NetworkingModule(), FeatureModule())
        #expect(container.registrations.count == 2)
    }

    struct Fakes: ScopeModule {
        func register(in scope: Scope) {
            scope.register(String.self) { "fake" }
        }
    }

    @Test("A scope installs a module of overrides: they resolve in it and below, and the container keeps its own")
    func scopeInstallsAModule() throws {
        let container = Container()
        container.install(NetworkingModule())
        container.register(String.self) { "real" }
        let test = container.openScope()
        test.install(Fakes())
        #expect(try test.require(String.self) == "fake")
        #expect(try test.openScope().require(String.self) == "fake")
        #expect(try container.require(String.self) == "real")
        test.dispose()
        #expect(try container.require(String.self) == "real")
    }

    @Test func scopeInstallsModulesInOrder() throws {
        struct Second: ScopeModule {
            func register(in scope: Scope) { scope.register(String.self, ifAlreadyRegistered: .replace) { "second" } }
        }
        let container = Container()
        let scope = container.openScope()
        scope.install([Fakes(), Second()])
        #expect(try scope.require(String.self) == "second")
    }
}
