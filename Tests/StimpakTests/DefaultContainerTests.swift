import Testing
import Stimpak
import StimpakTestSupport

/// `Container.default`, the current scope where nothing is bound. Each test sets the default inside
/// `DefaultContainerAccess.run`, as every suite that sets it does; the other suites bind a scope, which wins
/// over it.
@Suite(.serialized) struct DefaultContainerTests {
    @Test("with no default and nothing bound, every injection says what to call")
    func missingDefault() throws {
        try DefaultContainerAccess.run { try Self.missingDefaultBody() }
    }

    static func missingDefaultBody() throws {
        Container.default = nil
        let error = try #require(throws: ResolutionError.self) { try Scope.current }
        #expect(error.code == .noCurrentScope)
        #expect(error.description.contains("no scope is bound with scope.withCurrent { ... }"))
        #expect(error.description.contains("Fix: set Container.default = container once at start-up"))
        let injectError = try #require(throws: ResolutionError.self) { try inject(Foo.self) }
        #expect(injectError.code == .noCurrentScope)
        #expect(injectError.description.contains("Stimpak has no scope to resolve Foo from"))
        #expect(injectError.description.contains("DefaultContainerTests.swift"), "the call site")
    }

    @Test("the start-up default is the current scope wherever nothing is bound, on any thread")
    func startUpDefault() throws {
        try DefaultContainerAccess.run { try Self.startUpDefaultBody() }
    }

    static func startUpDefaultBody() throws {
        let container = PropertyWrapperTests.container("default")
        Container.default = container
        #expect(try Scope.current === container.root)
        #expect(GreetingScreen().greeter.greeting == "default")
        let seen = EventLog()
        hammer(threads: 4) { _ in seen.append(GreetingScreen().greeter.greeting) }
        #expect(seen.events == Array(repeating: "default", count: 4))
        let request = container.openScope("request")
        request.register((any Greeter).self) { FixedGreeter(greeting: "request") }
        #expect(request.withCurrent { GreetingScreen().greeter.greeting } == "request", "a binding wins")
    }

    @Test("@OptionalInjected without any current scope stops too: it is a setup error, not a missing service")
    func optionalWithoutScopeStops() async {
        await #expect(processExitsWith: .failure) {
            Container.default = nil
            _ = GreetingValue()
        }
    }

    @Test("replacing the default container releases the old one with no lock held: a deinit may read the default")
    func replacingTheDefaultReleasesOutsideItsLock() {
        DefaultContainerAccess.run { Self.replacingTheDefaultBody() }
    }

    static func replacingTheDefaultBody() {
        final class ReadsDefault: @unchecked Sendable {
            let released: Signal
            init(_ released: Signal) { self.released = released }
            deinit {
                _ = Container.default
                released.fire()
            }
        }
        @Sendable func container(holding held: ReadsDefault) -> Container {
            let container = Container()
            container.root.provide(held)
            return container
        }
        let released = Signal()
        let returned = returnsPromptly {
            Container.default = container(holding: ReadsDefault(released))
            Container.default = Container()
        }
        #expect(returned, "no deadlock")
        // A deadlocked release holds what `reclaim()` would wait for.
        guard returned else { return }
        Container.reclaim()
        #expect(released.wait())
    }
}
