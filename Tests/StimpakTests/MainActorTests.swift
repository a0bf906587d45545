import Testing
import Stimpak
import StimpakMainActorFixture

/// Main-actor factories, and the fixture target built with `.defaultIsolation(MainActor.self)`.
@Suite struct MainActorTests {
    @MainActor
    @Test("the fixture's README snippets resolve synchronously on the main actor")
    func fixtureOnTheMainActor() throws {
        let container = MainActorFixture.makeContainer()
        let report = try MainActorFixture.resolveOnTheMainActor(container)
        #expect(report.settingsTitle == "Settings")
        #expect(report.sharedStore, "a singleton")
        #expect(report.sameModelInScope, ".inScope")
        #expect(report.injectedSettings, "@Injected in a main-actor class, from the scope its factory bound")
    }

    @Test("off the main actor, `try await` hops to it; a synchronous resolve says to await")
    func fixtureFromElsewhere() async throws {
        let container = await MainActorFixture.makeContainer()
        #expect(try await MainActorFixture.resolveFromElsewhere(container) == "Settings")
    }

    @Test("a main-actor registration resolved synchronously off the main thread fails with requiresAwait")
    func synchronousOffMain() async throws {
        let container = Container()
        let log = EventLog()
        container.register(MainActorCounter.self, reuse: .singleton, onMainActor: { MainActorCounter(log: log) })
        let error = await Task.detached { () -> ResolutionError? in
            do {
                _ = try container.root.requireSynchronously(MainActorCounter.self)
                return nil
            } catch {
                return error as? ResolutionError
            }
        }.value
        #expect(error?.code == .requiresAwait)
        #expect(error?.description.contains("its factory runs on the main actor, and this is not the main thread") == true)
        let counter = try await Task.detached { try await container.require(MainActorCounter.self) }.value
        #expect(log.count(of: "made") == 1)
        // Made: it resolves from any thread now.
        let again = try await Task.detached { try container.root.requireSynchronously(MainActorCounter.self) }.value
        #expect(again === counter)
    }

    /// A container with an `.inScope` service and a main-actor singleton whose factory resolves it, and a request.
    private static func singletonCapturingASession() -> (Container, request: Scope) {
        let container = Container()
        container.register(Tracked.self, reuse: .inScope) { Tracked("session", log: EventLog()) }
        container.register(
            MainActorHolder.self, reuse: .singleton,
            onMainActor: { (scope: Scope) in
                MainActorHolder(try scope.requireSynchronously(Tracked.self))
            })
        return (container, container.openScope("request"))
    }

    @Test("a main-actor singleton made by an await off the main actor refuses an .inScope dependency, as on the main actor")
    func captiveThroughAnAwait() async throws {
        let (container, request) = Self.singletonCapturingASession()
        let error = await Task.detached { () -> ResolutionError? in
            do {
                _ = try await request.require(MainActorHolder.self)
                return nil
            } catch {
                return error as? ResolutionError
            }
        }.value
        #expect(error?.code == .captiveDependency)
        #expect(error?.captor?.description.contains("MainActorHolder") == true)
        let onTheMainActor = await MainActor.run { () -> ResolutionError? in
            let (container, request) = Self.singletonCapturingASession()
            return withExtendedLifetime(container) { () -> ResolutionError? in
                do {
                    _ = try request.requireSynchronously(MainActorHolder.self)
                    return nil
                } catch {
                    return error as? ResolutionError
                }
            }
        }
        #expect(onTheMainActor?.code == .captiveDependency)
        withExtendedLifetime(container) {}
    }

    @Test("a main-actor singleton whose factory requires itself is a cycle, made by an await as on the main actor")
    func selfRequireThroughAnAwait() async throws {
        let runs = Counter()
        @Sendable func makeContainer() -> Container {
            let container = Container()
            container.register(
                MainActorLoop.self, reuse: .singleton,
                onMainActor: { (scope: Scope) in
                    runs.increment()
                    _ = try scope.requireSynchronously(MainActorLoop.self)
                    return MainActorLoop()
                })
            return container
        }
        let container = makeContainer()
        let error = await Task.detached { () -> ResolutionError? in
            do {
                _ = try await container.require(MainActorLoop.self)
                return nil
            } catch {
                return error as? ResolutionError
            }
        }.value
        #expect(error?.code == .dependencyCycle)
        #expect(error?.pathDescription == "MainActorLoop → MainActorLoop")
        let onTheMainActor = await MainActor.run { () -> ResolutionError? in
            let container = makeContainer()
            do {
                _ = try container.root.requireSynchronously(MainActorLoop.self)
                return nil
            } catch {
                return error as? ResolutionError
            }
        }
        #expect(onTheMainActor?.code == .dependencyCycle)
        #expect(onTheMainActor?.pathDescription == "MainActorLoop → MainActorLoop")
        // Not made, and not left marked: a later resolve runs the factory again (the first container's second run).
        let again = await Task.detached { try? await container.require(MainActorLoop.self) }.value
        #expect(again == nil)
        #expect(runs.value == 3, "twice for the first container, once on the main actor for the second")
    }

    @Test("a main-actor .graph parent made by an await leaves nothing of its graph on the main thread")
    func graphParentThroughAnAwait() async throws {
        let container = Container()
        container.register(
            GraphParent.self, reuse: .graph,
            onMainActor: { (scope: Scope) in
                GraphParent(child: try scope.requireSynchronously(GraphChild.self))
            })
        container.register(GraphChild.self, reuse: .graph) { GraphChild() }
            .resolved { scope, child in child.parent = try scope.require(GraphParent.self) }
        let parent = try await Task.detached { try await container.require(GraphParent.self) }.value
        #expect(parent.child.parent != nil, "the child's callback ran")
        let child = try await MainActor.run { try container.root.requireSynchronously(GraphChild.self) }
        #expect(child !== parent.child, "a graph of its own, not one left behind on the main thread")
    }

    @Test("1,000 tasks off the main actor racing one main-actor singleton: one creation")
    func racingMainActorSingleton() async throws {
        let container = Container()
        let log = EventLog()
        container.register(MainActorCounter.self, reuse: .singleton, onMainActor: { MainActorCounter(log: log) })
        let ids = try await withThrowingTaskGroup(of: ObjectIdentifier.self) { group in
            for _ in 0..<1_000 {
                group.addTask { ObjectIdentifier(try await container.require(MainActorCounter.self)) }
            }
            return try await group.reduce(into: Set<ObjectIdentifier>()) { $0.insert($1) }
        }
        #expect(ids.count == 1)
        #expect(log.count(of: "made") == 1)
    }
}

@MainActor
final class MainActorCounter {
    let value: Int
    init(log: EventLog) {
        log.append("made")
        value = log.count(of: "made")
    }
}

@MainActor
final class MainActorHolder {
    let held: Tracked
    init(_ held: Tracked) { self.held = held }
}

@MainActor
final class GraphParent {
    let child: GraphChild
    init(child: GraphChild) { self.child = child }
}

final class GraphChild: @unchecked Sendable {  // `parent` is set once, by its `resolved` callback
    var parent: GraphParent?
}

/// A main-actor singleton whose factory resolves itself.
final class MainActorLoop: Sendable {}
