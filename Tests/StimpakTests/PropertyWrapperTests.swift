import Foundation
import Stimpak
import StimpakTestSupport
import Testing

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

/// One instance per scope that resolves it: which scope a wrapper resolved from.
final class ScopeMark: Sendable {}

/// An object a factory makes, whose wrappers resolve while that factory runs.
final class MadeByFactory: @unchecked Sendable {  // the wrappers are set once, when it is made
    @Injected var mark: ScopeMark
    @LazyInjected var lazyMark: ScopeMark
    @WeakInjected var weakMark: ScopeMark?
    @OptionalInjected var optionalMark: ScopeMark?
    /// What `inject` resolves in its initializer.
    let injected: ScopeMark?
    init() { injected = try? inject(ScopeMark.self) }
}

/// A factory's object that another factory's object is made inside: its own wrapper resolves after it.
final class Outer: @unchecked Sendable {  // set once, when it is made
    let inner: MadeByFactory
    @Injected var mark: ScopeMark
    init(inner: MadeByFactory) { self.inner = inner }
}

/// The scope a wrapper in an object made by a factory resolves from: the factory's, then the bound one, then
/// the default container's.
@Suite struct FactoryScopeInjectionTests {
    /// A container whose `ScopeMark` is one per scope, and `MadeByFactory` made by a factory of every kind.
    static func container() -> Container {
        let container = Container()
        container.register(ScopeMark.self, reuse: .inScope) { ScopeMark() }
        container.register(MadeByFactory.self) { MadeByFactory() }
        container.register(MadeByFactory.self, reuse: .inScope, key: "scoped") { MadeByFactory() }
        container.register(MadeByFactory.self, reuse: .transient, key: "callback") { MadeByFactory() }
            .resolved { _, _ in }
        return container
    }

    static func expect(_ made: MadeByFactory, resolvedFrom scope: Scope, _ comment: Comment) throws {
        let mark = try scope.require(ScopeMark.self)
        #expect(made.mark === mark, comment)
        #expect(made.lazyMark === mark, comment)
        #expect(made.weakMark === mark, comment)
        #expect(made.optionalMark === mark, comment)
        #expect(made.injected === mark, comment)
    }

    @Test(
        "a factory's scope wins over the scope the caller bound: transient (lock-free and locked), .inScope, with a callback",
        arguments: [nil, "scoped", "callback"] as [String?])
    func factoryScopeWinsOverTheBoundScope(key: String?) throws {
        let container = Self.container()
        let child = container.openScope("child")
        let other = container.openScope("other")
        for _ in 0..<2 {  // the first resolve of a transient may take the locked path, the next the lock-free one
            let made = try other.withCurrent { try child.require(MadeByFactory.self, key: key) }
            try Self.expect(made, resolvedFrom: child, "the factory ran for `child`")
        }
        // After the factory returns, an object made here resolves from the bound scope again.
        let outside = other.withCurrent { MadeByFactory() }
        try Self.expect(outside, resolvedFrom: other, "made outside any factory")
    }

    @Test("a factory's scope wins over the default container, and a lazy wrapper keeps it for its first read")
    func factoryScopeWinsOverTheDefault() throws {
        try DefaultContainerAccess.run {
            let container = Self.container()
            Container.default = container
            let child = container.openScope("child")
            let made = try child.require(MadeByFactory.self, key: "scoped")
            let lazy = try child.require(Lazy<MadeByFactory>.self).value
            try container.openScope("elsewhere").withCurrent {
                try Self.expect(made, resolvedFrom: child, "read under another binding, after the factory returned")
                try Self.expect(lazy, resolvedFrom: child, "made on a Lazy's first read")
            }
            try Self.expect(MadeByFactory(), resolvedFrom: container.root, "outside any factory: the default")
        }
    }

    @Test("nested factories: the innermost factory's scope wins, and the outer one's is back after it returns")
    func innermostFactoryWins() throws {
        let container = Self.container()
        let outer = container.openScope("outer")
        let inner = container.openScope("inner")
        container.register(Outer.self) { Outer(inner: try inner.require(MadeByFactory.self)) }
        let made = try container.openScope("bound").withCurrent { try outer.require(Outer.self) }
        try Self.expect(made.inner, resolvedFrom: inner, "the inner factory ran for `inner`")
        #expect(made.mark === (try outer.require(ScopeMark.self)), "the outer factory's wrapper, after the inner returned")
    }

    @Test("a singleton's factory resolves its wrappers from the root scope")
    func singletonFactoryUsesTheRoot() throws {
        final class Greeting: Sendable {
            let text: String
            init(_ text: String) { self.text = text }
        }
        final class SingletonOwner: @unchecked Sendable {  // set once, when it is made
            @Injected var greeting: Greeting
        }
        let container = Container()
        container.register(Greeting.self) { Greeting("root") }
        container.register(SingletonOwner.self, reuse: .singleton) { SingletonOwner() }
        let child = container.openScope("child")
        child.register(Greeting.self) { Greeting("child") }
        let owner = try child.withCurrent { try child.require(SingletonOwner.self) }
        #expect(owner.greeting.text == "root")
    }

    @Test("a factory running on one thread does not lend its scope to another thread")
    func threadsDoNotLeak() throws {
        let container = Self.container()
        let child = container.openScope("child")
        let other = container.openScope("other")
        let started = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        container.register(MadeByFactory.self, key: "blocking") { () -> MadeByFactory in
            started.signal()
            proceed.wait()
            return MadeByFactory()
        }
        nonisolated(unsafe) var made: MadeByFactory?  // written by the thread before `done`, read after it
        let thread = Thread {
            made = try? child.require(MadeByFactory.self, key: "blocking")
            done.signal()
        }
        thread.start()
        started.wait()  // the factory runs on the other thread now
        let here = other.withCurrent { MadeByFactory() }
        proceed.signal()
        done.wait()
        try Self.expect(here, resolvedFrom: other, "made on this thread while the other's factory ran")
        try Self.expect(try #require(made), resolvedFrom: child, "the other thread's factory")
    }

    @Test("an async factory's scope wins over the bound scope, in its child tasks, not in another task, not after it")
    func asyncFactoryScope() async throws {
        let container = Self.container()
        let child = container.openScope("child")
        let other = container.openScope("other")
        let inner = container.openScope("inner")
        let (entered, enteredContinuation) = AsyncStream<Void>.makeStream()
        let (release, releaseContinuation) = AsyncStream<Void>.makeStream()
        container.register(MadeByFactory.self, key: "waiting") { (_: Scope) async -> MadeByFactory in
            enteredContinuation.yield()
            for await _ in release { break }
            let made = MadeByFactory()
            async let fromChildTask = MadeByFactory()
            let childTasks = await fromChildTask
            return childTasks.mark === made.mark ? made : childTasks
        }
        container.register(MadeByFactory.self, key: "async") { (_: Scope) async -> MadeByFactory in MadeByFactory() }
        container.register(Outer.self, key: "async") { (_: Scope) async throws -> Outer in
            Outer(inner: try await inner.require(MadeByFactory.self, key: "async"))
        }
        let factory = Task { try await other.withCurrent { try await child.require(MadeByFactory.self, key: "waiting") } }
        for await _ in entered { break }
        let elsewhere = await Task { other.withCurrent { MadeByFactory() } }.value  // the factory is suspended
        releaseContinuation.yield()
        let made = try await factory.value
        try Self.expect(made, resolvedFrom: child, "the async factory ran for `child`, and its child task too")
        try Self.expect(elsewhere, resolvedFrom: other, "another task, while the factory was suspended")
        let after = other.withCurrent { MadeByFactory() }
        try Self.expect(after, resolvedFrom: other, "after the factory returned")

        let outer = try await other.withCurrent { try await child.require(Outer.self, key: "async") }
        try Self.expect(outer.inner, resolvedFrom: inner, "the innermost async factory")
        let childMark = try await child.require(ScopeMark.self)
        #expect(outer.mark === childMark, "the outer async factory's, after the inner returned")
    }
}

/// The rule for async services: a property wrapper resolves synchronously, so it reaches only a service made
/// synchronously; `validate()` reports each declared use of one whose factory is `async`.
@Suite struct WrapperAsyncRuleTests {
    final class Feed: Sendable { init() {} }  // made by an async factory
    final class Clock: Sendable { init() {} }  // made by a synchronous one
    final class FeedScreen: @unchecked Sendable {  // set once, when it is made
        @Injected var feed: Feed
    }
    final class LazyScreen: Sendable { init() {} }
    final class WeakScreen: Sendable { init() {} }
    final class OptionalScreen: Sendable { init() {} }
    final class Reader: Sendable { init(_ feed: Lazy<Feed>) {} }

    @Test("validate() reports every declared wrapper of an async service, naming the service, the wrapper and the fix")
    func validateReportsEachWrapperOfAnAsyncService() throws {
        let container = Container()
        container.register(Feed.self, reuse: .inScope) { () async in Feed() }
        container.register(Clock.self) { Clock() }
        container.register(FeedScreen.self) { FeedScreen() }.dependsOn(Injected<Feed>.self, Injected<Clock>.self)
        // An async factory cannot await for its instance's wrappers either: they resolve in `init`.
        container.register(LazyScreen.self) { () async in LazyScreen() }.dependsOn(LazyInjected<Feed>.self)
        container.register(WeakScreen.self, reuse: .inScope) { WeakScreen() }.dependsOn(WeakInjected<Feed>.self)
        container.register(OptionalScreen.self) { OptionalScreen() }.dependsOn(OptionalInjected<Feed>.self)
        let problems = container.validate().problems
        #expect(problems.map(\.code) == Array(repeating: .requiresAwait, count: 4), "\(problems)")
        let owners: [Any.Type] = [FeedScreen.self, LazyScreen.self, WeakScreen.self, OptionalScreen.self]
        #expect(problems.map(\.path.first) == owners.map { ServiceKey(service: $0) })
        #expect(problems.allSatisfy { $0.requested == ServiceKey(service: Feed.self) })
        for (problem, wrapper) in zip(problems, ["@Injected", "@LazyInjected", "@WeakInjected", "@OptionalInjected"]) {
            let text = problem.description
            #expect(text.contains("\(wrapper) in \(problem.path[0])"), "\(text)")
            #expect(text.contains("Feed's factory is async"), "\(text)")
            #expect(text.contains("try await scope.require(Feed.self)"), "\(text)")
        }
    }

    @Test("validate() reports a Lazy parameter of an async service: its value resolves synchronously")
    func lazyParameterOfAnAsyncService() {
        let container = Container()
        container.register(Feed.self) { () async in Feed() }
        container.autowire(Reader.self, Reader.init)
        let problems = container.validate().problems
        #expect(problems.map(\.code) == [.requiresAwait])
        #expect(problems.first?.description.contains("Lazy<Feed> in Reader") == true, "\(problems)")
    }

    @Test("a declared wrapper is a dependency like any other: missing, in a cycle (@Injected) or not (@LazyInjected)")
    func declaredWrappersAreDependencies() {
        let container = Container()
        container.register(FeedScreen.self) { FeedScreen() }.dependsOn(Injected<Feed>.self)
        #expect(container.validate().problems.map(\.code) == [.notRegistered])
        container.register(Feed.self) { Feed() }.dependsOn(Injected<FeedScreen>.self)
        #expect(container.validate().problems.map(\.code) == [.dependencyCycle])
        container.register(Feed.self, ifAlreadyRegistered: .replace) { Feed() }.dependsOn(LazyInjected<FeedScreen>.self)
        #expect(container.validate().isValid)
    }

    @Test("validateByResolving() does not make what a wrapper of an async service would stop the program in")
    func byResolvingSkipsWhatWouldStop() async {
        let container = Container()
        container.register(Feed.self) { () async in Feed() }
        container.register(FeedScreen.self) { FeedScreen() }.dependsOn(Injected<Feed>.self)
        container.register(Clock.self) { scope in
            _ = try scope.require(FeedScreen.self); return Clock()
        }
        .dependsOn(FeedScreen.self)
        let report = await container.validateByResolving()
        #expect(report.problems.map(\.code) == [.requiresAwait])
    }

    @Test("@Injected of a service whose factory is async stops the program with the rule and the fix")
    func injectedOfAnAsyncServiceStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = Container()
            container.register(Feed.self) { () async in Feed() }
            _ = container.root.withCurrent { FeedScreen() }
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("@Injected"))
        #expect(text.contains("Feed's factory is async"))
        #expect(text.contains("try await scope.require(Feed.self)"))
    }
}
