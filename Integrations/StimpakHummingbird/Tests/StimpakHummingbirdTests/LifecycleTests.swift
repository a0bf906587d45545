import Hummingbird
import HummingbirdTesting
import Logging
import ServerExampleModule
import ServerExampleServices
import ServerTestSupport
import ServiceLifecycleTestKit
import Stimpak
import StimpakHummingbird
import StimpakHummingbirdExampleApp
import StimpakHummingbirdTesting
import StimpakServer
import Synchronization
import Testing

/// The container's service, clients that go away, and the testing helpers.
@Suite(.timeLimit(.minutes(2))) struct LifecycleTests {
    final class Counter: Sendable {
        let value = Mutex<Int>(0)
    }

    /// An app's pool: closed, awaited, when the container is disposed.
    actor Pool: AsyncDisposable {
        let closed: Counter
        init(closed: Counter) { self.closed = closed }
        func dispose() async throws {
            try await Task.sleep(for: .milliseconds(5))
            closed.value.withLock { $0 += 1 }
        }
    }

    /// A container whose eager singleton `Pool` counts its creations in `made` and its closings in `closed`.
    static func containerWithEagerPool(made: Counter, closed: Counter) -> Container {
        let container = Container()
        container.register(Pool.self, reuse: .eagerSingleton) { () -> Pool in
            made.value.withLock { $0 += 1 }
            return Pool(closed: closed)
        }
        return container
    }

    @Test("the service makes the eager singletons at start-up and disposes the container, awaited, after the server")
    func serviceDisposesTheContainerAtShutdown() async throws {
        let (made, closed) = (Counter(), Counter())
        let container = Self.containerWithEagerPool(made: made, closed: closed)
        let router = Router(context: BasicStimpakRequestContext.self)
        router.add(middleware: StimpakMiddleware(container: container))
        router.get("/") { _, context -> String in
            _ = try context.scope.require(Pool.self)
            return "ok"
        }
        var app = Application(router: router)
        app.addServices(StimpakService(container: container, logger: app.logger))
        try await app.test(.router) { client in
            try await client.execute(uri: "/", method: .get) { #expect($0.status == .ok) }
            #expect(!container.isDisposed, "open while the server runs")
        }
        #expect(made.value.withLock { $0 } == 1)
        #expect(container.isDisposed)
        #expect(closed.value.withLock { $0 } == 1, "the async hook was awaited")
    }

    @Test("an invalid container stops start-up, naming the problem; a request-scoped consumer of the request is valid")
    func serviceValidatesAtStartUp() async throws {
        final class Captive: Sendable {
            init(request: Request) {}
        }
        final class PerRequest: Sendable {
            init(request: Request, id: RequestIdentifier, logger: Logger) {}
        }
        let valid = Container()
        valid.autowire(PerRequest.self, reuse: .inScope, PerRequest.init)
        let invalid = Container()
        invalid.autowire(PerRequest.self, reuse: .inScope, PerRequest.init)
        invalid.autowire(Captive.self, reuse: .singleton, Captive.init)

        let log = RecordedLog()
        let service = StimpakService(container: invalid, logger: log.logger())
        await #expect(throws: InvalidContainer.self) { try await service.run() }
        #expect(log.entries.contains { $0.level == .error && $0.message.contains("Captive") })

        try await testGracefulShutdown { trigger in
            trigger.triggerGracefulShutdown()
            try await StimpakService(container: valid, logger: log.logger()).run()
        }
        #expect(valid.isDisposed)
    }

    @Test("a failed start-up disposes the eager singletons it made, awaiting their hooks, before it throws")
    func failedStartUpDisposesWhatItMade() async throws {
        struct Broken: Error {}
        final class Cache: Sendable {}
        let closed = Counter()
        let container = Container()
        container.register(Pool.self, reuse: .eagerSingleton) { Pool(closed: closed) }
        container.register(Cache.self, reuse: .eagerSingleton) { () throws -> Cache in throw Broken() }
        let log = RecordedLog()
        await #expect(throws: (any Error).self) {
            try await StimpakService(container: container, logger: log.logger(), validates: false).run()
        }
        #expect(container.isDisposed)
        #expect(closed.value.withLock { $0 } == 1, "the pool made before the failure was closed")
    }

    @Test("a cancelled service group: the container is disposed with a warning, its async hooks not cancelled")
    func cancelledGroupDisposesTheContainerUncancelled() async throws {
        let (made, closed) = (Counter(), Counter())
        let container = Self.containerWithEagerPool(made: made, closed: closed)
        let log = RecordedLog()
        let service = StimpakService(container: container, logger: log.logger(), validates: false)
        try await testGracefulShutdown { _ in
            let running = Task { try await service.run() }
            #expect(try await eventually { made.value.withLock { $0 } == 1 })
            running.cancel()
            try await running.value
        }
        #expect(container.isDisposed)
        // `Pool.dispose()` sleeps: cancelled with the group, it would throw and count nothing.
        #expect(closed.value.withLock { $0 } == 1, "the async hook ran to its end")
        #expect(log.entries.contains { $0.level == .warning && $0.message.contains("not shut down gracefully") })
        #expect(!log.entries.contains { $0.level == .error })
    }

    @Test("a client that disconnects mid-stream: the session is closed once the write fails")
    func clientDisconnectsMidStream() async throws {
        let test = StimpakTestScope(container: ExampleApp.makeContainer())
        let router = Router(context: BasicStimpakRequestContext.self)
        router.add(middleware: test.middleware())
        ExampleApp.addRoutes(to: router, container: test.container)
        try await Application(router: router).test(.live) { client in
            let port = try #require(client.port)
            let received = try sendAndHangUp(
                port: port, "GET /stream?lines=100000 HTTP/1.1\r\nHost: localhost\r\n\r\n", readBytes: 200)
            #expect(received.hasPrefix("HTTP/1.1 200"))
            let pool = try await test.container.require(ConnectionPool.self)
            #expect(try await eventually { pool.sessionsClosed == 1 }, "closed once the client went away")
            #expect(test.openRequestCount == 0)
        }
        try await test.requireNoLeaks()
    }

    @Test("a client that disconnects before the response is written: the dropped response's scope is disposed")
    func clientDisconnectsBeforeTheResponse() async throws {
        let test = StimpakTestScope(container: ExampleApp.makeContainer())
        let started = AsyncStream.makeStream(of: Void.self)
        let router = Router(context: BasicStimpakRequestContext.self)
        router.add(middleware: test.middleware())
        router.get("/slow") { _, context -> Response in
            let session = try await context.scope.require(DatabaseSession.self)
            started.continuation.yield()
            try? await Task.sleep(for: .milliseconds(300))
            return Response(
                status: .ok,
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: try session.query("late")))
                    try await writer.finish(nil)
                })
        }
        try await Application(router: router).test(.live) { client in
            let port = try #require(client.port)
            _ = try sendAndHangUp(port: port, "GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n", readBytes: 0)
            var iterator = started.stream.makeAsyncIterator()
            await iterator.next()
            let pool = try await test.container.require(ConnectionPool.self)
            #expect(pool.sessionsOpened == 1)
            #expect(try await eventually { pool.sessionsClosed == 1 })
            #expect(try await eventually { test.openRequestCount == 0 })
        }
        try await test.requireNoLeaks()
    }

    /// Replaces every response with an empty one: the response the middleware returns is dropped unwritten.
    struct DropsResponses<Context: RequestContext>: RouterMiddleware {
        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
            _ = try await next(request, context)
            return Response(status: .noContent)
        }
    }

    @Test("a streamed response dropped unwritten (by an outer middleware): its scope is disposed when it is released")
    func droppedResponse() async throws {
        let test = StimpakTestScope(container: ExampleApp.makeContainer())
        let router = Router(context: BasicStimpakRequestContext.self)
        router.add(middleware: DropsResponses())
        router.add(middleware: test.middleware())
        ExampleApp.addRoutes(to: router, container: test.container)
        try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "/stream", method: .get) { #expect($0.status == .noContent) }
        }
        let pool = try await test.container.require(ConnectionPool.self)
        #expect(pool.sessionsOpened == 1)
        #expect(try await eventually { pool.sessionsClosed == 1 })
        #expect(try await eventually { test.openRequestCount == 0 })
        try await test.requireNoLeaks()
    }

    @Test("a test scope's module of fakes overrides the container's registrations for that test only")
    func testScopeInstallsFakes() async throws {
        let fake = ConnectionPool()
        let container = ExampleApp.makeContainer()
        let test = StimpakTestScope(container: container, installing: FakePool(pool: fake))
        let router = Router(context: BasicStimpakRequestContext.self)
        router.add(middleware: test.middleware())
        ExampleApp.addRoutes(to: router, container: container)
        try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "/users/7", method: .get) { #expect($0.status == .ok) }
        }
        #expect(fake.sessionsOpened == 1)
        #expect(fake.sessionsClosed == 1)
        #expect(try await container.require(ConnectionPool.self).sessionsOpened == 0)
        try await test.requireNoLeaks()
    }

    @Test("validation with a request's values: the example is valid; a singleton that captures the request is not")
    func validateRequestScope() async throws {
        let test = StimpakTestScope(container: ExampleApp.makeContainer())
        let report = await test.validateRequestScope()
        #expect(report.problems.isEmpty, "\(report)")

        final class Captive: Sendable {
            init(request: Request) {}
        }
        let broken = ExampleApp.makeContainer()
        broken.autowire(Captive.self, reuse: .singleton, Captive.init)
        let brokenReport = await StimpakTestScope(container: broken).validateRequestScope()
        #expect(brokenReport.problems.contains { $0.path.first == ServiceKey(service: Captive.self) }, "\(brokenReport)")
    }

    @Test("requireNoLeaks fails when an instance outlives its request scope or a request scope is left open, and waits for an instance released late")
    func leaksAreReported() async throws {
        final class Kept: Sendable {}
        final class Held: Sendable { let instances = Mutex<[Kept]>([]) }
        let kept = Held()
        let container = Container()
        container.register(Kept.self, reuse: .inScope) { Kept() }
        let test = StimpakTestScope(container: container)
        let router = Router(context: BasicStimpakRequestContext.self)
        router.add(middleware: test.middleware())
        router.get("/") { _, context -> String in
            let instance = try context.scope.require(Kept.self)
            kept.instances.withLock { $0.append(instance) }
            return "ok"
        }
        try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "/", method: .get) { #expect($0.status == .ok) }
        }
        await #expect(throws: LeakReport.self) { try await test.requireNoLeaks(timeout: .milliseconds(100)) }
        // Released after the check began, as a response that captured it is released after its scope's disposal:
        // not a leak, since the check waits for it.
        Task {
            try? await Task.sleep(for: .milliseconds(50))
            kept.instances.withLock { $0.removeAll() }
        }
        try await test.requireNoLeaks()

        let open = test.scope.openScope()
        await #expect(throws: LeakReport.self) { try await test.requireNoLeaks(timeout: .milliseconds(10)) }
        await open.dispose()
        try await test.requireNoLeaks()
    }

    @Test("requireNoLeaks waits for a request scope's disposal under way, and names the scope when it does not end")
    func disposalUnderWay() async throws {
        final class Slow: AsyncDisposable {
            let release: AsyncStream<Void>
            init(release: AsyncStream<Void>) { self.release = release }
            func dispose() async {
                for await _ in release { return }
            }
        }
        let (release, releasing) = AsyncStream<Void>.makeStream()
        let container = Container()
        container.register(Slow.self, reuse: .inScope) { Slow(release: release) }
        let test = container.openScope()
        let request = test.openScope()
        _ = try await request.require(Slow.self)
        let record = RequestScopeRecord()
        let disposal = Task { await RequestScopes.dispose(request, logger: Logger(label: "test"), record: record) }
        #expect(try await eventually { record.disposing.count == 1 })
        do {
            try await LeakReport.check(openBelow: test, record: record, timeout: .milliseconds(50))
            Issue.record("the check passed while the request scope's disposal was under way")
        } catch {
            #expect(error.openScopes == ["\(request.key!) (being disposed)"])
        }
        releasing.yield()
        try await LeakReport.check(openBelow: test, record: record, timeout: .seconds(5))
        #expect(record.disposedCount == 1)
        #expect(record.disposing.isEmpty)
        await disposal.value
    }
}
