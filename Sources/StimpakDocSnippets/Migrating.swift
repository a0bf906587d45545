// swift-format-ignore-file
// (the snippets keep their documents' layout: aligned comments, long lines)
// The snippets of the migration guides and of the catalog's landing page. Each is copied verbatim from its document (.ci/check-doc-snippets.swift checks it),
// inside a function so that it compiles; what follows a snippet only uses what it made.
import Foundation
import Stimpak
import StimpakConfiguration

enum MigratingSnippets {
    static func swinject(container: Container, url: URL) throws {
        container.register(Database.self, reuse: .singleton) { Database(url: url) }     // .inObjectScope(.container)
        container.register(Repository.self) { (scope: Scope) in Repository(try scope.require(UnitOfWork.self)) }
        container.autowire(OrderService.self, OrderService.init)                        // no closure at all
        container.register(Person.self, key: "x") { (first: String, last: String) in Person(first, last) }
        let person = try container.require(Person.self, ("Bill", "Gates"), key: "x")   // name: "x", arguments: a, b
        _ = person
    }

    static func factory(container: Container) throws {
        container.register(Api.self, reuse: .singleton) { Api() }        // var api: Factory<Api> { self { Api() }.singleton }
        Container.default = container                                     // what @Injected resolves from

        let test = container.openScope("a test")
        test.register(Api.self, reuse: .singleton) { MockApi() }          // only this scope and below see it
        let api = try test.require(Api.self)                              // the mock
        test.dispose()                                                    // the mock is gone with the scope
        _ = api
    }

    static func kraken(container: Container) throws {
        container.register((any ServiceA).self, implementation: ServiceAImpl.self, reuse: .singleton)
        container.autowire(ServiceE.self, ServiceEImpl.init)              // every parameter resolved
        container.register(Cache.self, reuse: .eagerSingleton) { Cache() }
        try container.makeEagerSingletons()                                // at start-up: every failure at once
        Container.default = container

        let a = try inject((any ServiceA).self)                           // Kraken's inject(ServiceA.self)
        _ = a
    }

    static func dice() throws {
        let container = Container(defaultReuse: .eagerSingleton)          // DICE's Defaults.scope = .single
        container.register(Api.self) { Api() }
        container.register(Logger.self, key: "audit", reuse: .transient) { Logger() }
        try Container.use(container)                                      // DICE.use(container): makes Api

        final class ProfileScreen {
            @LazyInjected var api: Api                                    // DICE's @Injected: on first read
            @LazyInjected("audit") var log: Logger                        // or @LazyInjected(key: "audit")
        }
    }

    static func dryIoc(container: Container) throws {
        container.register(Repository.self, reuse: .inScope) { (scope: Scope) in Repository(try scope.require(UnitOfWork.self)) }
        container.register(ShoppingCart.self, reuse: .scopedTo("session")) { ShoppingCart() }   // Reuse.ScopedTo("session")
        container.decorate(Repository.self) { _, inner in inner.logged() }                     // Setup.Decorator
        try container.requireValid()                                                           // Validate(), as a throw

        let session = container.openScope("session")
        let request = session.openScope()                       // an anonymous scope below the named one
        let cart = try request.require(ShoppingCart.self)       // made in "session"
        _ = cart
    }

    static func dose() throws {
        let definitions = Definitions(types: ServiceTypes()
            .type("DoseTests.Service1", Service1.self)
            .type("DoseTests.Service2", Service2.self))
        try definitions.load(contentsOf: URL(fileURLWithPath: "services.plist"))
        try definitions.install(SimpleLoggerProvider(), parameters: ["debug_output": true])
        let service2 = try definitions.get("dose.service2", as: Service2.self)             // Kernel.instance.get
        let same = try definitions.container.require(Service2.self, key: "dose.service2")  // the same instance
        _ = (service2, same)
    }

    static func landingPage(url: URL) async throws {
        let container = Container()
        container.register(Database.self, reuse: .singleton) { try await Database.connect(url) }
        container.register(Session.self, reuse: .inScope) { (scope: Scope) async throws in
            Session(try await scope.require(Database.self))
        }
        let response = try await container.withScope { request in
            try await request.require(Session.self).handle()
        }
        _ = response
    }
}
