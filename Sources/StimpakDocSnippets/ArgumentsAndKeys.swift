// swift-format-ignore-file
// (the snippets keep their documents' layout: aligned comments, long lines)
// The snippets of ArgumentsAndKeys.md. Each is copied verbatim from its document (.ci/check-doc-snippets.swift checks it),
// inside a function so that it compiles; what follows a snippet only uses what it made.
import Stimpak

enum ArgumentsAndKeysSnippets {
    static func overview(container: Container) throws {
        container.register(Person.self, { (_ first: String, _ last: String) in Person(first, last) }, reuse: .inScope)
        container.register(Person.self, key: "A") { Person("Ada", "Lovelace") }
        let bill = container.resolve(Person.self, ("Bill", "Gates"))
        let ada = try container.require(Person.self, key: "A")
        _ = (bill, ada)
    }

    static func runtimeArguments(container: Container) throws {
        container.register(Greeting.self) { (name: String) in Greeting(name) }
        container.register(Endpoint.self, key: "api") { (host: String, port: Int) in Endpoint(host, port) }
        let greeting = try container.require(Greeting.self, "Ada")
        let endpoint = try container.require(Endpoint.self, ("localhost", 8080), key: "api")
        _ = (greeting, endpoint)
    }

    static func comparingArguments(container: Container) {
        container.register(Person.self, reuse: .inScope) { (first: String, last: String) in Person(first, last) }
            .compareArgsByValue()

        let tenant = container.register(Tenant.self, reuse: .singleton) { (id: Int) in Tenant(id) }
        tenant.compareArgsBy { $0 == $1 }
    }

    static func keys(container: Container) {
        enum Env: Hashable { case production, staging }

        container.register(Foo.self, key: Env.production) { Foo() }
        let foo = container.resolve(Foo.self, key: Env.production)
        let gates = container.resolve(Person.self, ("Bill", "Gates"), "A")
        _ = (foo, gates)
    }
}
