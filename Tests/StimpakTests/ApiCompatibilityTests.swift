import Testing
import Stimpak

/// The call forms of the original Stimpak documentation, written exactly as documented.
@Suite struct ApiCompatibilityTests {
    @Test func documentedFormsCompileAndBehave() throws {
        var container = Container()
        container.register(Foo.self, { () -> Foo in return Foo() })  // default reuse: .transient
        container += (Foo.self, { () -> Foo in return Foo() })
        container += (Foo.self, { () -> Foo in return Foo() }, Reuse.inScope)
        let foo = container.resolve(Foo.self)!
        #expect(foo !== container.resolve(Foo.self)!, "the first registration (transient) is kept")

        let scope = container.openScope("6F1A7D0C-0F3C-4F8B-9C7E-1B7C3F3E2A11")
        let nested = scope.openScope(42)
        let a = nested.resolve(Foo.self)
        #expect(a != nil)
        nested.dispose()
        #expect(nested.isDisposed)
        container.disposeScope(scope)
        #expect(scope.isDisposed)

        container += (Person.self, { (_ first: String, _ last: String) -> Person in Person(first, last) }, Reuse.inScope)
        container.register(Person.self, { (_ a: String, _ b: String) -> Person in Person(a, b) }, reuse: Reuse.inScope)
            .compareArgsBy({ (a: (String, String), b: (String, String)) -> Bool in a == b })
        let bill = container.resolve(Person.self, ("Bill", "Gates"))
        #expect(bill?.first == "Bill")
        container.register(Person.self, { (_ a: String, _ b: String) -> Person in Person(a, b) }, reuse: Reuse.inScope, key: "A")
        let keyed = container.resolve(Person.self, ("Bill", "Gates"), "A")
        #expect(keyed?.last == "Gates")
        #expect(keyed !== bill)

        container += (Clock.self, Reuse.singleton)
        #expect(container.resolve(Clock.self) === container.resolve(Clock.self))
        container = Container()
        #expect(container.resolve(Clock.self) == nil)
    }

    /// A registration is named and extended as `ServiceResolver<Service, Args>`, the type alias of the class
    /// `ServiceRegistration<Args, Service>` (service last, for the runtime's metadata cache).
    @Test func registrationIsAServiceResolverOfServiceAndArguments() throws {
        let container = Container()
        let registration: ServiceResolver<Person, (String, String)> =
            container.register(Person.self, { (_ a: String, _ b: String) -> Person in Person(a, b) }, reuse: .inScope)
        #expect(type(of: registration) == ServiceRegistration<(String, String), Person>.self)
        #expect(registration.describedService == "Person")
        #expect(ObjectIdentifier(registration.serviceKey.service) == ObjectIdentifier(Person.self))
        #expect(ObjectIdentifier(registration.serviceKey.arguments) == ObjectIdentifier((String, String).self))
        let refined: ServiceResolver<Person, (String, String)> = registration.compareArgsBy { $0 == $1 }
        #expect(refined === registration)
    }

    @Test func swiftForms() throws {
        let container = Container()
        container.register(Foo.self, reuse: .singleton) { Foo() }
        container.register(Foo.self, key: "A") { Foo() }
        container.register(Clock.self, reuse: .inScope)
        container.register(Person.self) { (first: String, last: String) in Person(first, last) }
        container.register(Person.self, reuse: .inScope) { (scope: Scope, first: String) in
            Person(first, try scope.require(Clock.self) === scope.resolve(Clock.self) ? "same clock" : "other clock")
        }

        let singleton: Foo? = container.resolve()
        #expect(singleton === container.resolve(Foo.self))
        #expect(container.resolve(Foo.self, key: "A") !== container.resolve(Foo.self, key: "A"))
        #expect(container.resolve(Person.self, ("Ada", "Lovelace"))?.last == "Lovelace")
        #expect(try container.require(Person.self, "Ada").last == "same clock")

        let scope = container.openScope("screen")
        #expect(container["screen"] === scope)
        #expect(container[404] == nil)
        #expect(scope.openScope(1) === scope[1])

        #expect(container.unregister(Foo.self, key: "A"))
        #expect(!container.unregister(Foo.self, key: "A"))
        #expect(container.resolve(Foo.self, key: "A") == nil)
        #expect(container.isRegistered(Person.self, arguments: (String, String).self))
        #expect(container.unregister(Person.self, arguments: (String, String).self))
        #expect(!container.isRegistered(Person.self, arguments: (String, String).self))
    }

    @Test func resolvedCallbackInjectsProperties() {
        final class Node: @unchecked Sendable {
            var next: Node?
        }
        let container = Container()
        container.register(Node.self, reuse: .singleton) { Node() }
            .resolved { scope, node in node.next = scope.resolve(Node.self) }
        let node = container.resolve(Node.self)
        #expect(node != nil)
        #expect(node?.next === node, "the cycle of references is closed through the cached instance")
        node?.next = nil
    }
}

/// A user's extension of the registration, written with the public name and its parameter names.
extension ServiceResolver where Service == Person {
    fileprivate var describedService: String { "\(Service.self)" }
}
