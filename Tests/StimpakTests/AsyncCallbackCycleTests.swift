import Testing
import Stimpak

/// A `resolved` callback that closes a cycle through an instance made by an `async` factory (Swinject's
/// `initCompleted`, Kraken's weak property, with `async` factories): either side may be resolved first.
@Suite(.timeLimit(.minutes(1))) struct AsyncCallbackCycleTests {
    final class Parent: Sendable {
        let child: Child
        init(child: Child) { self.child = child }
    }

    final class Child: @unchecked Sendable {  // `parent` is set once, by the callback
        weak var parent: Parent?
    }

    /// Which factories are `async`.
    enum Factories: String, CaseIterable, CustomTestStringConvertible {
        case asyncParent, asyncChild, bothAsync, neither
        var testDescription: String { rawValue }
        var isParentAsync: Bool { self == .asyncParent || self == .bothAsync }
        var isChildAsync: Bool { self == .asyncChild || self == .bothAsync }
    }

    /// `Parent` takes its child in its initializer; `Child` gets its weak parent in its callback.
    static func container(_ factories: Factories, reuse: Reuse = .singleton, runs: EventLog? = nil) -> Container {
        let container = Container()
        if factories.isParentAsync {
            container.register(Parent.self, reuse: reuse) { (scope: Scope) async throws in
                Parent(child: try await scope.require(Child.self))
            }
        } else {
            container.register(Parent.self, reuse: reuse) { (scope: Scope) in Parent(child: try scope.require(Child.self)) }
        }
        let callback: @Sendable (Scope, Child) throws -> Void = { scope, child in
            runs?.append("callback")
            child.parent = try scope.require(Parent.self)
        }
        if factories.isChildAsync {
            container.register(Child.self, reuse: reuse) { (_: Scope) async in Child() }.resolved(callback)
        } else {
            container.register(Child.self, reuse: reuse) { Child() }.resolved(callback)
        }
        return container
    }

    /// (A synchronous `Parent` factory cannot resolve an `async` `Child`: that is `requiresAwait`, callback or not.)
    @Test(
        "resolving the parent first: the child's callback runs once the parent is made",
        arguments: Factories.allCases.filter { $0 != .asyncChild })
    func parentFirst(factories: Factories) async throws {
        let container = Self.container(factories)
        let parent = try await container.require(Parent.self)
        #expect(parent.child.parent === parent)
        #expect(try await container.require(Child.self) === parent.child)
    }

    @Test("resolving the child first: its callback gets the parent, made with that child", arguments: Factories.allCases)
    func childFirst(factories: Factories) async throws {
        let container = Self.container(factories)
        let child = try await container.require(Child.self)
        let parent = try #require(child.parent)
        #expect(parent.child === child)
        #expect(try await container.require(Parent.self) === parent)
    }

    @Test("per scope, in both orders", arguments: [Factories.asyncParent, .bothAsync])
    func inScope(factories: Factories) async throws {
        let container = Self.container(factories, reuse: .inScope)
        let first = container.openScope("first")
        let parent = try await first.require(Parent.self)
        #expect(parent.child.parent === parent)
        let second = container.openScope("second")
        let child = try await second.require(Child.self)
        #expect(child.parent?.child === child)
        #expect(child.parent !== parent)
    }

    @Test("the callback runs twice: once meeting the cycle, once after the instance it needs is made")
    func callbackRuns() async throws {
        let runs = EventLog()
        let container = Self.container(.bothAsync, runs: runs)
        _ = try await container.require(Parent.self)
        #expect(runs.count(of: "callback") == 2)
    }

    @Test("a callback that needs a service an async factory has not made yet: the await makes it, then runs the callback again")
    func callbackNeedsAnUnmadeAsyncService() async throws {
        final class Clock: Sendable {}
        final class Report: @unchecked Sendable {  // `clock` is set once, by the callback
            var clock: Clock?
        }
        let runs = EventLog()
        let container = Container()
        container.register(Clock.self, reuse: .singleton) { () async in Clock() }
        container.register(Report.self, reuse: .singleton) { Report() }.resolved { scope, report in
            runs.append("callback")
            report.clock = try scope.require(Clock.self)
        }
        let report = try await container.require(Report.self)
        #expect(report.clock != nil)
        #expect(try await report.clock === container.require(Clock.self))
        #expect(runs.count(of: "callback") == 2, "once meeting the async factory, once after its instance is made")
    }

    @Test("a synchronous resolve of the child cannot await its async parent: requiresAwait, not a hang")
    func synchronousResolveSaysToAwait() throws {
        let container = Self.container(.asyncParent)
        let error = try #require(throws: ResolutionError.self) { try container.require(Child.self) }
        #expect(error.code == .requiresAwait)
    }

    @Test("a deferred callback that fails again fails the outermost resolve; the instances stay made")
    func failingAgain() async throws {
        struct Boom: Error {}
        let container = Container()
        container.register(Parent.self, reuse: .singleton) { (scope: Scope) async throws in
            Parent(child: try await scope.require(Child.self))
        }
        let runs = EventLog()
        container.register(Child.self, reuse: .singleton) { Child() }
            .resolved { scope, child in
                runs.append("callback")
                child.parent = try scope.require(Parent.self)
                throw Boom()
            }
        let error = await #expect(throws: ResolutionError.self) { try await container.require(Parent.self) }
        #expect(error?.code == .factoryFailed)
        #expect(error?.underlyingError is Boom)
        #expect(runs.count(of: "callback") == 2)
        let parent = try await container.require(Parent.self)
        #expect(parent.child.parent === parent)
    }

    @Test("a parent whose creation fails drops the callback deferred until it is made")
    func droppedWithAFailedCreation() async throws {
        struct Boom: Error {}
        let container = Container()
        let attempts = EventLog()
        container.register(Parent.self, reuse: .singleton) { (scope: Scope) async throws -> Parent in
            let child = try await scope.require(Child.self)
            attempts.append("parent")
            if attempts.count(of: "parent") == 1 { throw Boom() }
            return Parent(child: child)
        }
        let runs = EventLog()
        container.register(Child.self, reuse: .singleton) { Child() }
            .resolved { scope, child in
                runs.append("callback")
                child.parent = try scope.require(Parent.self)
            }
        await #expect(throws: ResolutionError.self) { try await container.require(Parent.self) }
        #expect(runs.count(of: "callback") == 1, "not run again: its parent was never made")
        let parent = try await container.require(Parent.self)
        #expect(parent.child.parent == nil, "the child was made once, with the failed attempt")
    }

    @Test("a true cycle of async factories stays an error, callback or not")
    func trueCycle() async throws {
        final class Left: Sendable { init(_ right: Right) {} }
        final class Right: @unchecked Sendable {}
        let container = Container()
        container.register(Left.self, reuse: .singleton) { (scope: Scope) async throws in Left(try await scope.require(Right.self)) }
        container.register(Right.self, reuse: .singleton) { (scope: Scope) async throws -> Right in
            _ = try await scope.require(Left.self)
            return Right()
        }
        .resolved { scope, _ in _ = try scope.require(Left.self) }
        let error = await #expect(throws: ResolutionError.self) { try await container.require(Left.self) }
        #expect(error?.code == .dependencyCycle)
        #expect(error?.pathDescription == "Left → Right → Left")
    }
}
