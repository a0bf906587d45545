import Testing
import Stimpak

actor Connection: AsyncDisposable {
    let name: String
    let log: EventLog
    let fails: Bool
    init(_ name: String, log: EventLog, fails: Bool = false) {
        self.name = name
        self.log = log
        self.fails = fails
    }

    func dispose() async throws {
        try await Task.sleep(nanoseconds: 1_000_000)
        log.append("close \(name)")
        if fails { throw Boom() }
    }
}

/// Asynchronous disposal, structured scopes and anonymous scopes.
@Suite(.timeLimit(.minutes(1))) struct AsyncDisposalTests {
    @Test("await dispose() awaits async hooks newest first, with the synchronous ones, and reports failures")
    func order() async throws {
        let log = EventLog()
        let container = Container()
        container.register(Connection.self, reuse: .inScope, key: "a") { Connection("a", log: log) }
        container.register(Tracked.self, reuse: .inScope) { Tracked("sync", log: log) }
        container.register(Connection.self, reuse: .inScope, key: "b") { () async in Connection("b", log: log, fails: true) }
        container.register(Foo.self, reuse: .inScope) { Foo() }
            .onDispose { _ async throws in
                try await Task.sleep(nanoseconds: 1_000_000)
                log.append("foo hook")
            }
        let scope = container.openScope("request")
        _ = try await scope.require(Connection.self, key: "a")
        _ = try await scope.require(Tracked.self)
        _ = try await scope.require(Connection.self, key: "b")
        _ = try await scope.require(Foo.self)
        let failures = await scope.dispose()
        #expect(log.events == ["foo hook", "close b", "dispose sync", "close a"])
        #expect(failures.count == 1)
        #expect(failures.first?.service.description.contains("Connection") == true)
        #expect(await scope.dispose().isEmpty, "twice does nothing")
    }

    @Test("a synchronous dispose() runs the async hooks afterwards, in order, in a task of their own")
    func synchronousDisposeSchedules() async throws {
        let log = EventLog()
        let container = Container()
        container.register(Connection.self, reuse: .inScope, key: "a") { Connection("a", log: log) }
        container.register(Connection.self, reuse: .inScope, key: "b") { Connection("b", log: log) }
        container.register(Tracked.self, reuse: .inScope) { Tracked("sync", log: log) }
        let scope = container.openScope("request")
        _ = try await scope.require(Connection.self, key: "a")
        _ = try await scope.require(Connection.self, key: "b")
        _ = try await scope.require(Tracked.self)
        scope.disposeSynchronously()
        #expect(log.events == ["dispose sync"])
        try await log.waitForEvents(3)
        #expect(log.events == ["dispose sync", "close b", "close a"])
    }

    @Test("a synchronous dispose() keeps the order past the first async hook: a child's session closes before the parent's pool")
    func synchronousDisposeKeepsTheOrderAcrossScopes() async throws {
        let log = EventLog()
        let container = Container()
        container.register(Tracked.self, reuse: .inScope) { Tracked("pool", log: log) }
        container.register(Connection.self, reuse: .inScope) { Connection("session", log: log) }
        let tenant = container.openScope("tenant")
        _ = try await tenant.require(Tracked.self)
        let request = tenant.openScope("request")
        _ = try await request.require(Connection.self)
        tenant.disposeSynchronously()
        try await log.waitForEvents(2)
        #expect(log.events == ["close session", "dispose pool"])
    }

    @Test("a parent's disposal waits for the async hooks that a child's synchronous dispose() left to a task")
    func parentWaitsForAChildsAsyncHooks() async throws {
        let log = EventLog()
        let container = Container()
        container.register(Tracked.self, reuse: .singleton) { Tracked("pool", log: log) }
        container.register(Connection.self, reuse: .inScope) { Connection("session", log: log) }
        _ = try await container.require(Tracked.self)
        let request = container.openScope("request")
        _ = try await request.require(Connection.self)
        request.disposeSynchronously()
        // The session's close is still running in its task: the container's disposal runs after it.
        _ = await container.dispose()
        try await log.waitForEvents(2)
        #expect(log.events == ["close session", "dispose pool"])
    }

    /// A container whose request-scoped session's async hook awaits the disposal of `above()`, a scope above the
    /// request's, with a pool in `tenant` (the request's parent) and one in the container.
    private static func sessionAwaitingDisposal(
        of above: @escaping @Sendable (Container, Scope) -> (@Sendable () async -> [DisposalFailure]), log: EventLog
    ) -> (Container, tenant: Scope) {
        let container = Container()
        let tenant = container.openScope("tenant")
        let disposeAbove = above(container, tenant)
        container.register(Tracked.self, reuse: .singleton, key: "root") { Tracked("root pool", log: log) }
        container.register(Connection.self, reuse: .singleton, key: "root") { Connection("root pool", log: log) }
        container.register(Tracked.self, reuse: .inScope) { Tracked("pool", log: log) }
        container.register(Connection.self, reuse: .inScope) { Connection("pool", log: log) }
        container.register(Foo.self, reuse: .inScope) { Foo() }
            .onDispose { _ async in
                log.append("session hook")
                let failures = await disposeAbove()
                log.append("returned with \(failures.count) failures")
            }
        return (container, tenant)
    }

    @Test(
        "an async hook that awaits the disposal of a scope above its own returns: that disposal's hooks run after the hook's scope's",
        arguments: ["awaited", "synchronous", "grandchild", "container", "in a task"])
    func hookAwaitingADisposalAbove(_ form: String) async throws {
        let log = EventLog()
        let (container, tenant) = Self.sessionAwaitingDisposal(
            of: { container, tenant in
                switch form {
                case "container": return { await container.dispose() }
                case "in a task": return { await Task { await tenant.dispose() }.value }
                default: return { await tenant.dispose() }
                }
            }, log: log)
        _ = try await container.require(Tracked.self, key: "root")
        _ = try await container.require(Connection.self, key: "root")
        _ = try await tenant.require(Tracked.self)
        _ = try await tenant.require(Connection.self)
        let request = form == "grandchild" ? tenant.openScope("flow").openScope("request") : tenant.openScope("request")
        _ = try await request.require(Foo.self)
        if form == "synchronous" {
            request.disposeSynchronously()
            log.append("request disposal returned")
        } else {
            Task {
                let failures = await request.dispose()
                log.append("request disposal returned with \(failures.count) failures")
            }
        }
        let expected = form == "container" ? 7 : 5
        try await log.waitForEvents(expected)
        let events = log.events
        #expect(events.count == expected, "the disposals finish: \(events)")
        func precedes(_ first: String, _ second: String) -> Bool {
            guard let a = events.firstIndex(of: first), let b = events.firstIndex(of: second) else { return false }
            return a < b
        }
        #expect(precedes("returned with 0 failures", "close pool"))
        #expect(precedes("close pool", "dispose pool"))
        let returned = events.first { $0.hasPrefix("request disposal returned") } ?? "never"
        #expect(returned != "never")
        #expect(tenant.isDisposed)
        if form != "synchronous" {
            // The scopes above, which waited for the request's, are disposed, async hooks included, before it returns.
            #expect(precedes("dispose pool", returned))
            if form == "container" { #expect(precedes("close root pool", returned)) }
        }
        if form == "container" {
            #expect(precedes("dispose pool", "close root pool"))
            #expect(precedes("close root pool", "dispose root pool"))
        }
    }

    @Test("a task that an async hook started, awaiting a disposal above after the hook's scope's has finished, waits as any other")
    func taskStartedByAHookAwaitsLater() async throws {
        let log = EventLog()
        let container = Container()
        let tenant = container.openScope("tenant")
        container.register(Connection.self, reuse: .inScope) { Connection("pool", log: log, fails: true) }
        container.register(Foo.self, reuse: .inScope, key: "first") { Foo() }
            .onDispose { _ async in
                // Started inside the hook: it copies the hook's task-local values, and outlives it.
                Task {
                    await log.waitFor("second is disposing")
                    log.append("tenant disposing")
                    let failures = await tenant.dispose()
                    log.append("tenant disposal returned with \(failures.count) failures")
                }
            }
        container.register(Foo.self, reuse: .inScope, key: "second") { Foo() }
            .onDispose { _ async in
                log.append("second is disposing")
                await log.waitFor("let second finish")
                log.append("second disposed")
            }
        _ = try await tenant.require(Connection.self)
        let first = tenant.openScope("first")
        _ = try await first.require(Foo.self, key: "first")
        await first.dispose()
        let second = tenant.openScope("second")
        _ = try await second.require(Foo.self, key: "second")
        Task { await second.dispose() }
        #expect(await log.waitFor("tenant disposing"))
        try await Task.sleep(nanoseconds: 20_000_000)
        // The tenant's disposal waits for the second request's, which is under way, and then returns its failure.
        #expect(!log.events.contains { $0.hasPrefix("tenant disposal returned") })
        log.append("let second finish")
        #expect(await log.waitFor("tenant disposal returned with 1 failures"))
        #expect(log.events.suffix(3) == ["second disposed", "close pool", "tenant disposal returned with 1 failures"])
    }

    @Test("the disposal of a scope above, run by a cancelled request's await dispose(), is not cancelled")
    func disposalAboveRunByACancelledRequest() async throws {
        let log = EventLog()
        let container = Container()
        container.register(Connection.self, reuse: .inScope) { Connection("pool", log: log) }
        container.register(Foo.self, reuse: .inScope) { Foo() }
            .onDispose { _ async in
                log.append("request closing")
                await log.waitFor("let the request finish")
            }
        let tenant = container.openScope("tenant")
        _ = try await tenant.require(Connection.self)
        let request = tenant.openScope("request")
        _ = try await request.require(Foo.self)
        let disposal = Task { await request.dispose() }
        #expect(await log.waitFor("request closing"))
        // The tenant's hooks wait for the request's: its last step runs them.
        tenant.disposeSynchronously()
        disposal.cancel()
        log.append("let the request finish")
        await disposal.value
        #expect(log.events.contains("close pool"), "the pool's close ran uncancelled: \(log.events)")
    }

    @Test("withScope disposes the scope when the body returns, throws or is cancelled")
    func withScope() async throws {
        let log = EventLog()
        let container = Container()
        container.register(Connection.self, reuse: .inScope) { Connection("request", log: log) }
        let value = try await container.withScope { scope in
            _ = try await scope.require(Connection.self)
            return 42
        }
        #expect(value == 42)
        #expect(log.events == ["close request"])

        await #expect(throws: Boom.self) {
            try await container.withScope { scope in
                _ = try await scope.require(Connection.self)
                throw Boom()
            }
        }
        #expect(log.events == ["close request", "close request"])

        let started = AsyncGate()
        let task = Task {
            try await container.withScope { scope in
                _ = try await scope.require(Connection.self)
                await started.open()
                try await Task.sleep(nanoseconds: 10_000_000_000)
            }
        }
        await started.wait()
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(log.events == ["close request", "close request", "close request"])

        let sync = container.withScope("sync") { scope in scope.key }
        #expect(sync == AnyHashable("sync"))
        #expect(container["sync"] == nil, "disposed and detached")
    }

    @Test("withScope reports the disposal failures, whether the body returns or throws")
    func withScopeReportsDisposalFailures() async throws {
        let log = EventLog()
        let container = Container()
        container.register(Connection.self, reuse: .inScope) { Connection("request", log: log, fails: true) }
        let reported = FailureBox()
        let value = try await container.withScope(onDisposalFailures: reported.add) { scope in
            _ = try await scope.require(Connection.self)
            return 42
        }
        #expect(value == 42)
        #expect(reported.failures.map(\.service) == [ServiceKey(service: Connection.self)])
        #expect("\(reported.failures[0].error)" == "boom")

        await #expect(throws: CancellationError.self) {
            try await container.withScope(onDisposalFailures: reported.add) { scope in
                _ = try await scope.require(Connection.self)
                throw CancellationError()
            }
        }
        #expect(reported.failures.count == 2, "reported when the body throws too")

        _ = await container.withScope(onDisposalFailures: reported.add) { _ async in 1 }
        #expect(reported.failures.count == 2, "nothing failed: nothing reported")
        #expect(log.events == ["close request", "close request"])
    }

    @Test("the synchronous withScope reports the failures of synchronous hooks")
    func synchronousWithScopeReportsDisposalFailures() throws {
        let container = Container()
        container.register(Foo.self, reuse: .inScope) { Foo() }.onDispose { _ in throw Boom() }
        let reported = FailureBox()
        let foo = try container.withScope(onDisposalFailures: reported.add) { scope in try scope.require(Foo.self) }
        withExtendedLifetime(foo) {}
        #expect(reported.failures.map(\.service) == [ServiceKey(service: Foo.self)])
    }

    @Test("await container.dispose() in async code awaits the async hooks before it returns")
    func containerDisposeAwaitsAsyncHooks() async throws {
        let log = EventLog()
        let container = Container()
        container.register(Connection.self, reuse: .singleton) { Connection("pool", log: log, fails: true) }
        _ = try await container.require(Connection.self)
        let failures = await container.dispose()
        #expect(log.events == ["close pool"])
        #expect(failures.count == 1)
    }

    @Test("an anonymous scope is always a fresh child, never one another caller holds")
    func anonymousScopes() async throws {
        let container = Container()
        container.register(Foo.self, reuse: .inScope) { Foo() }
        let a = container.openScope()
        let b = container.openScope()
        #expect(a !== b)
        #expect(a.key != b.key)
        #expect(try await a.require(Foo.self) !== b.require(Foo.self))
        #expect(container[a.key!] === a, "findable by its own key")
        let keys = await withTaskGroup(of: String.self) { group in
            for _ in 0..<100 {
                group.addTask { container.withScope { "\($0.key!)" } }
            }
            return await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(keys.count == 100)
        await a.dispose()
        #expect(!b.isDisposed)
    }
}

extension Scope {
    /// The synchronous `dispose()`, callable from async code (where Swift picks the async form).
    func disposeSynchronously() {
        dispose()
    }
}

/// Collects the disposal failures a `withScope` reports.
final class FailureBox: @unchecked Sendable {  // `stored` is guarded by `lock`
    private let lock = TestLock()
    private var stored: [DisposalFailure] = []

    @Sendable func add(_ failures: [DisposalFailure]) {
        lock.withLock { stored.append(contentsOf: failures) }
    }

    var failures: [DisposalFailure] { lock.withLock { stored } }
}

extension EventLog {
    /// Waits, five seconds at most, until `event` is logged; whether it was.
    @discardableResult
    func waitFor(_ event: String) async -> Bool {
        for _ in 0..<5_000 where !events.contains(event) { try? await Task.sleep(nanoseconds: 1_000_000) }
        return events.contains(event)
    }

    /// Waits, a second at most, until `count` events are logged: hooks that run in a task of their own.
    func waitForEvents(_ count: Int) async throws {
        for _ in 0..<1_000 where events.count < count { try await Task.sleep(nanoseconds: 1_000_000) }
    }
}
