import Testing
import Stimpak

/// `provide`d values on the lock-free path: published where they are put and where they are found, never
/// stale after a scope in between provides its own.
@Suite struct ProvidedValueTests {
    struct Request: Sendable, Equatable {
        let id: Int
    }

    static func chain(below scope: Scope, depth: Int) -> [Scope] {
        var scopes: [Scope] = []
        var current = scope
        for level in 0..<depth {
            current = current.openScope(level)
            scopes.append(current)
        }
        return scopes
    }

    @Test func foundAgainFromDeepBelowWithTheSameValue() throws {
        let container = Container()
        let request = container.openScope("request")
        request.provide(Request(id: 1))
        let deep = Self.chain(below: request, depth: 7).last!
        for _ in 0..<3 { #expect(try deep.require(Request.self) == Request(id: 1)) }
        #expect(try request.require(Request.self) == Request(id: 1))
    }

    @Test func aScopeInBetweenThatProvidesItsOwnShadowsWhatBelowAlreadyFound() throws {
        let container = Container()
        let top = container.openScope("top")
        top.provide(Request(id: 1))
        let scopes = Self.chain(below: top, depth: 4)
        #expect(try scopes[3].require(Request.self) == Request(id: 1))
        #expect(try scopes[3].require(Request.self) == Request(id: 1), "now published in scopes[3]")
        scopes[1].provide(Request(id: 2))
        #expect(try scopes[3].require(Request.self) == Request(id: 2), "not the stale value")
        #expect(try scopes[1].require(Request.self) == Request(id: 2))
        #expect(try scopes[0].require(Request.self) == Request(id: 1))
        // Provided twice in the same scope: the newer value.
        scopes[1].provide(Request(id: 3))
        #expect(try scopes[1].require(Request.self) == Request(id: 3))
        #expect(try scopes[3].require(Request.self) == Request(id: 3))
    }

    @Test func theRootsValueAndTheRegistrationBehindIt() throws {
        let container = Container()
        container.register(Request.self) { Request(id: 0) }
        let scope = container.openScope(1).openScope(2)
        #expect(try scope.require(Request.self) == Request(id: 0), "no value provided: the registration")
        container.root.provide(Request(id: 9))
        #expect(try scope.require(Request.self) == Request(id: 9))
        #expect(try scope.require(Request.self) == Request(id: 9))
        #expect(try container.require(Request.self) == Request(id: 9))
        let other = container.openScope(3)
        other.provide(Request(id: 4))
        #expect(try other.openScope(1).require(Request.self) == Request(id: 4))
        #expect(try scope.require(Request.self) == Request(id: 9), "a sibling's value is not seen")
    }

    struct Handler: Sendable, Equatable {
        let name: String
    }

    @Test("a scope of many values and registrations: each found, replaced and removed, listed, and gone with it")
    func manyValuesAndRegistrationsInOneScope() throws {
        let container = Container()
        container.register(Handler.self, key: 5) { Handler(name: "container") }
        let request = container.openScope("request")
        // More than a scope keeps in its small array: the keys move to its dictionary on the way.
        for id in 0..<20 { request.provide(Request(id: id), key: id) }
        for id in 0..<12 { request.register(Handler.self, key: id) { Handler(name: "scope \(id)") } }
        let below = request.openScope("below")
        for id in 0..<20 { #expect(try below.require(Request.self, key: id) == Request(id: id)) }
        for id in 0..<12 { #expect(try below.require(Handler.self, key: id) == Handler(name: "scope \(id)")) }
        request.provide(Request(id: 100), key: 3)
        #expect(try below.require(Request.self, key: 3) == Request(id: 100), "the newer value")
        #expect(request.unregister(Handler.self, key: 5))
        #expect(try below.require(Handler.self, key: 5) == Handler(name: "container"), "the scope's is gone")
        let report = request.report()
        #expect(report.provided.count == 20)
        #expect(report.registrations.count == 11)
        request.dispose()
        #expect(try container.require(Handler.self, key: 5) == Handler(name: "container"))
        #expect(throws: ResolutionError.self) { try container.require(Request.self, key: 3) }
    }

    @Test("a few values in one scope: each found, replaced and removed by its key")
    func fewValuesInOneScope() throws {
        let container = Container()
        let request = container.openScope()
        request.provide(Request(id: 1))
        request.provide(Request(id: 2), key: "second")
        request.register(Handler.self) { Handler(name: "scope") }
        #expect(try request.require(Request.self) == Request(id: 1))
        #expect(try request.require(Request.self, key: "second") == Request(id: 2))
        request.provide(Request(id: 3))
        #expect(try request.require(Request.self) == Request(id: 3))
        #expect(try request.require(Request.self, key: "second") == Request(id: 2))
        #expect(request.unregister(Handler.self))
        #expect(!request.unregister(Handler.self))
        #expect(throws: ResolutionError.self) { try request.require(Handler.self) }
        #expect(request.report().provided.count == 2)
    }
}
