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
}
