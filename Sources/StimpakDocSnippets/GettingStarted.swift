// swift-format-ignore-file
// (the snippets keep their documents' layout: aligned comments, long lines)
// The snippets of GettingStarted.md. Each is copied verbatim from its document (.ci/check-doc-snippets.swift checks it),
// inside a function so that it compiles; what follows a snippet only uses what it made.
import Foundation
import Stimpak

enum GettingStartedSnippets {
    static func overview(url: URL) throws {
        let container = Container()
        container.register(Clock.self, reuse: .singleton)                        // Clock: Instantiable
        container.register(Database.self, reuse: .singleton) { Database(url: url) }
        container.register(Session.self, reuse: .inScope) { (scope: Scope) in
            Session(try scope.require(Database.self))
        }
        container.autowire(OrderService.self, OrderService.init)                 // every parameter resolved

        let database = try container.require(Database.self)      // throws a ResolutionError that says why
        let maybe = container.resolve(Database.self)             // nil instead
        _ = (database, maybe)
    }

    static func registering(container: Container, configuration: Configuration) {
        container.register(Foo.self, { () -> Foo in Foo() })                 // default reuse: .transient
        container.register(Foo.self, reuse: .singleton) { Foo() }            // trailing closure
        container.register(Foo.self, key: "A") { Foo() }                     // keyed
        container.register(Session.self, reuse: .inScope) { scope in         // a factory that receives the scope
            Session(pool: try scope.require(ConnectionPool.self))
        }
        container.register(Clock.self, reuse: .singleton)                    // Clock: Instantiable (has init())
        container.register(Configuration.self, instance: configuration)      // an existing value

        container += (Foo.self, { () -> Foo in Foo() })                      // the += DSL
        container += (Foo.self, { () -> Foo in Foo() }, Reuse.inScope)
        container += (Clock.self, Reuse.singleton)
    }

    static func refining(container: Container) {
        container.register(Connection.self, reuse: .inScope) { Connection() }
            .onDispose { connection in connection.close() }      // when the scope that cached it is disposed
    }

    static func registeringAgain(container: Container) throws {
        try container.register(Foo.self, ifAlreadyRegistered: .throw) { Foo() }
        container.register(Foo.self, ifAlreadyRegistered: .replace) { Foo() }
        let removed = container.unregister(Foo.self)          // true if there was one
        let known = container.isRegistered(Foo.self, key: "A")
        _ = (removed, known)
    }

    static func autowiring(container: Container) {
        container.autowire(ServiceE.self, ServiceEImpl.init)      // init(a: ServiceA, b: ServiceB, c: ServiceC?)
        container.autowire(Greeter.self, reuse: .singleton) { (clock: Clock, log: Logger) in Greeter(clock, log) }
        container.register((any TimeSource).self, implementation: SystemClock.self)   // a protocol, an Instantiable type
    }

    static func modules(container: Container) {
        struct NetworkingModule: Module {
            func register(in container: Container) {
                container.register(HTTPClient.self, reuse: .singleton) { HTTPClient() }
                container.autowire(API.self, API.init)
            }
        }

        container.install(NetworkingModule(), PersistenceModule())
    }

    static func wrappers(container: Container) throws {
        container.autowire(ReportScreen.self) { (exporter: Lazy<PDFExporter>) in ReportScreen(exporter) }
        let screen = try container.require(ReportScreen.self)
        let pdf = try screen.exporter.value                        // made now, once
        let plugins = try container.requireAll((any Plugin).self)  // every registration, in order
        _ = (pdf, plugins)
    }

    static func providers(container: Container, order: [(String, Int)]) throws {
        var lines: [OrderLine] = []
        let makeLine = container.provider(OrderLine.self, arguments: (String, Int).self)
        for (sku, quantity) in order { lines.append(try makeLine((sku, quantity))) }
        _ = lines
    }

    static func decorators(container: Container) {
        container.decorate((any OrderStore).self) { scope, inner in LoggingOrderStore(inner, log: try scope.require(Logger.self)) }
        container.decorate((any OrderStore).self, key: "archive") { _, inner in CachingOrderStore(inner) }
    }
}
