import Testing
import Stimpak

/// A store that fails to close, with its own error.
protocol Store: AnyObject, Sendable {}

struct CloseFailed: Error, Equatable {
    let what: String
}

final class FailingStore: Store, Disposable {
    let name: String
    init(_ name: String) { self.name = name }
    func dispose() throws { throw CloseFailed(what: name) }
}

final class FailingAsyncStore: Store, AsyncDisposable {
    let name: String
    init(_ name: String) { self.name = name }
    func dispose() async throws { throw CloseFailed(what: name) }
}

/// The failures one instance's disposal reports: every hook that threw, none hidden by another.
@Suite struct DisposalFailureTests {
    private static func closed(_ failures: [DisposalFailure]) -> [String] {
        failures.compactMap { ($0.error as? CloseFailed)?.what }.sorted()
    }

    @Test("a decorated instance whose layers both fail to close reports both failures")
    func decoratedLayers() throws {
        let container = Container()
        container.register((any Store).self, reuse: .inScope) { FailingStore("inner") }
        container.decorate((any Store).self) { _, _ in FailingStore("wrapper") }
        let scope = container.openScope("request")
        _ = try scope.require((any Store).self)
        let failures = scope.dispose()
        #expect(Self.closed(failures) == ["inner", "wrapper"])
        #expect(failures.allSatisfy { $0.service.description.contains("Store") })
    }

    @Test("an onDispose hook that throws does not hide the instance's own failure to close")
    func hookAndInstance() throws {
        let container = Container()
        container.register(FailingStore.self, reuse: .inScope) { FailingStore("instance") }
            .onDispose { _ in throw CloseFailed(what: "hook") }
        let scope = container.openScope("request")
        _ = try scope.require(FailingStore.self)
        #expect(Self.closed(scope.dispose()) == ["hook", "instance"])
    }

    @Test("the same, with a synchronous hook over an AsyncDisposable instance, and with an async hook, awaited")
    func asyncHookAndInstance() async throws {
        let container = Container()
        container.register(FailingAsyncStore.self, reuse: .inScope) { FailingAsyncStore("async instance") }
            .onDispose { _ in throw CloseFailed(what: "sync hook") }
        container.register(FailingStore.self, reuse: .inScope) { FailingStore("instance") }
            .onDispose { _ async throws in throw CloseFailed(what: "async hook") }
        let scope = container.openScope("request")
        _ = try await scope.require(FailingAsyncStore.self)
        _ = try await scope.require(FailingStore.self)
        #expect(Self.closed(await scope.dispose()) == ["async hook", "async instance", "instance", "sync hook"])
    }

    @Test("the observer hears of each failure")
    func observerHearsEach() throws {
        let container = Container()
        let events = EventLog()
        container.observer = FailureRecorder(events)
        container.register((any Store).self, reuse: .inScope) { FailingStore("inner") }
        container.decorate((any Store).self) { _, _ in FailingStore("wrapper") }
        let scope = container.openScope("request")
        _ = try scope.require((any Store).self)
        scope.dispose()
        #expect(events.events.sorted() == ["inner", "wrapper"])
    }
}

/// Logs what each disposal hook that threw a `CloseFailed` closed.
struct FailureRecorder: ResolutionObserver {
    let log: EventLog
    init(_ log: EventLog) { self.log = log }
    func disposed(_ event: DisposalEvent) {
        if let error = event.error as? CloseFailed { log.append(error.what) }
    }
}
