import Foundation
import Testing
import Stimpak

protocol Greeter: Sendable {
    var greeting: String { get }
}

struct FixedGreeter: Greeter {
    let greeting: String
}

/// Counts the instances made, from any thread.
final class Counted: @unchecked Sendable {
    let log: EventLog
    init(_ log: EventLog) {
        self.log = log
        log.append("made")
    }
}

final class GreetingScreen {
    @Injected var greeter: any Greeter
    @Injected(key: "formal") var formal: any Greeter
    @Injected("formal") var tagged: any Greeter
}

struct GreetingValue {
    @Injected var greeter: any Greeter
    @OptionalInjected var missing: Foo?
    @OptionalInjected var present: (any Greeter)?
}

actor GreetingActor {
    @Injected nonisolated var greeter: any Greeter
    @LazyInjected nonisolated var lazyGreeter: any Greeter

    func greet() -> String { greeter.greeting }
}

final class LazyOwner: @unchecked Sendable {
    @LazyInjected var counted: Counted
}

final class Parent: @unchecked Sendable {
    let child: Child
    init(child: Child) { self.child = child }
}

final class Child: @unchecked Sendable {
    @WeakInjected var parent: Parent?
}

/// The property wrappers and the current scope they resolve from.
@Suite struct PropertyWrapperTests {
    static func container(_ greeting: String = "hello") -> Container {
        let container = Container()
        container.register((any Greeter).self) { FixedGreeter(greeting: greeting) }
        container.register((any Greeter).self, key: "formal") { FixedGreeter(greeting: "good day") }
        return container
    }

    @Test("@Injected in a class resolves from the scope bound around the owner's creation, with and without a key")
    func injectedInClass() {
        let container = Self.container()
        let screen = container.root.withCurrent { GreetingScreen() }
        #expect(screen.greeter.greeting == "hello")
        #expect(screen.formal.greeting == "good day")
        #expect(screen.tagged.greeting == "good day")
    }

    @Test("@Injected and @OptionalInjected in a struct: nil only when nothing is registered")
    func injectedInStruct() {
        let container = Self.container()
        let value = container.root.withCurrent { GreetingValue() }
        #expect(value.greeter.greeting == "hello")
        #expect(value.missing == nil)
        #expect(value.present?.greeting == "hello")
    }

    @Test("an actor's nonisolated wrapped properties resolve when the actor is made")
    func injectedInActor() async {
        let container = Self.container()
        let actor = container.root.withCurrent { GreetingActor() }
        #expect(actor.greeter.greeting == "hello")
        #expect(actor.lazyGreeter.greeting == "hello")
        #expect(await actor.greet() == "hello")
    }

    final class RequestHandler {
        @Injected var request: ProvidedRequest
        @Injected var session: Foo
        @OptionalInjected var optionalSession: Foo?
        @LazyInjected var lazySession: Foo
    }

    struct ProvidedRequest: Sendable { let id: Int }

    @Test("a bound request scope gives injections its .inScope services and its provided values, in child tasks too")
    func requestScope() async throws {
        let container = Container()
        container.register(Foo.self, reuse: .inScope) { Foo() }
        let request = container.openScope("request")
        request.provide(ProvidedRequest(id: 7))
        let session = try await request.require(Foo.self)
        try await request.withCurrent {
            let handler = RequestHandler()
            #expect(handler.request.id == 7)
            #expect(handler.session === session)
            #expect(handler.optionalSession === session)
            #expect(handler.lazySession === session)
            let fromChild = await Task { RequestHandler().session }.value
            #expect(fromChild === session)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { #expect(RequestHandler().lazySession === session) }
                try await group.waitForAll()
            }
        }
    }

    @Test("the innermost binding wins, and the outer one is back after it")
    func nestedScopes() {
        let container = Self.container("root")
        let request = container.openScope("request")
        request.register((any Greeter).self) { FixedGreeter(greeting: "request") }
        let inner = request.openScope("inner")
        inner.register((any Greeter).self) { FixedGreeter(greeting: "inner") }
        request.withCurrent {
            #expect(GreetingScreen().greeter.greeting == "request")
            inner.withCurrent {
                #expect(GreetingScreen().greeter.greeting == "inner")
                #expect(GreetingScreen().formal.greeting == "good day", "the container's registration, seen from below")
            }
            #expect(GreetingScreen().greeter.greeting == "request")
        }
        #expect(Scope.bound(in: container) == nil)
    }

    @Test("an async binding follows awaits and child tasks, not detached tasks")
    func asyncBinding() async throws {
        let container = Self.container("root")
        let request = container.openScope("request")
        request.register((any Greeter).self) { FixedGreeter(greeting: "request") }
        try await request.withCurrent {
            try await Task.sleep(nanoseconds: 1_000)
            #expect(GreetingScreen().greeter.greeting == "request", "after a suspension")
            async let child = GreetingScreen().greeter.greeting
            #expect(await child == "request", "in an async let child task")
            let grouped = await withTaskGroup(of: String.self) { group in
                for _ in 0..<4 { group.addTask { GreetingScreen().greeter.greeting } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(grouped == Array(repeating: "request", count: 4), "in a task group's children")
            let unstructured = await Task { GreetingScreen().greeter.greeting }.value
            #expect(unstructured == "request", "a Task inherits task-locals")
            let detached = await Task.detached { try? Scope.current }.value
            #expect(detached !== request, "a detached task does not inherit the binding")
        }
    }

    @Test("@LazyInjected resolves on first access, once, from the scope current when the owner was made")
    func lazyInjected() {
        let log = EventLog()
        let container = Container()
        let request = container.openScope("request")
        request.register(Counted.self, reuse: .transient) { Counted(log) }
        let owner = request.withCurrent { LazyOwner() }
        #expect(log.events.isEmpty, "nothing made with the owner")
        let first = owner.counted  // no scope is bound here: the remembered one is used
        #expect(owner.counted === first)
        #expect(log.count(of: "made") == 1)
    }

    @Test("@LazyInjected under racing first accesses keeps one instance")
    func lazyInjectedRace() {
        let log = EventLog()
        let container = Container()
        container.register(Counted.self, reuse: .singleton) { Counted(log) }
        let owner = container.root.withCurrent { LazyOwner() }
        let seen = EventLog()
        hammer(threads: 8) { _ in seen.append("\(ObjectIdentifier(owner.counted))") }
        #expect(Set(seen.events).count == 1)
        #expect(seen.events.count == 8)
        #expect(log.count(of: "made") == 1)
    }

    @Test("@WeakInjected closes a cycle: resolved after creation, held weakly, nil once released")
    func weakInjected() throws {
        let container = Container()
        let scope = container.openScope("screen")
        scope.register(Child.self) { Child() }
        scope.register(Parent.self, reuse: .inScope) { (scope: Scope) in
            Parent(child: try scope.withCurrent { try scope.require(Child.self) })
        }
        weak var weakParent: Parent?
        var child: Child?
        do {
            let parent = try #require(scope.resolve(Parent.self))
            weakParent = parent
            #expect(parent.child.parent === parent, "the parent, resolved when first read")
            child = parent.child
        }
        #expect(weakParent != nil, "the scope holds it")
        scope.dispose()
        Container.reclaim()
        #expect(weakParent == nil, "no strong cycle kept it")
        #expect(child?.parent == nil, "the child held it weakly")
    }

    @Test("inject() resolves from the current scope and throws noCurrentScope's text when there is none")
    func globalInject() throws {
        let container = Self.container()
        let greeter = try container.root.withCurrent { try inject((any Greeter).self) }
        #expect(greeter.greeting == "hello")
        let formal: any Greeter = try container.root.withCurrent { try inject(key: "formal") }
        #expect(formal.greeting == "good day")
    }

    @Test("@Injected of a missing service stops the program with the full error text")
    func injectedStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = Container()
            _ = container.root.withCurrent { GreetingScreen() }
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Stimpak has no registration for Greeter"))
        #expect(text.contains("Fix: register it"))
        #expect(text.contains("PropertyWrapperTests.swift"))
    }
}

extension Scope {
    /// The scope bound around the running code, if it belongs to `container`: for checking that a binding ended.
    static func bound(in container: Container) -> Scope? {
        guard let scope = try? Scope.current, scope.root === container.root else { return nil }
        return scope
    }
}
