import Logging
import ServerExampleModule
import ServerExampleServices
import ServerTestSupport
import Stimpak
import StimpakVapor
import StimpakVaporExampleApp
import StimpakVaporTesting
import Synchronization
import Testing
import VaporTesting

/// The container's lifecycle handler, clients that go away, and the testing helpers.
@Suite(.timeLimit(.minutes(2))) struct LifecycleTests {
    final class Counter: Sendable {
        let value = Mutex<Int>(0)
        var count: Int { value.withLock { $0 } }
        func increment() { value.withLock { $0 += 1 } }
    }

    /// An app's pool: closed, awaited, when the container is disposed.
    actor Pool: AsyncDisposable {
        let closed: Counter
        init(closed: Counter) { self.closed = closed }
        func dispose() async throws {
            try await Task.sleep(for: .milliseconds(5))
            closed.increment()
        }
    }

    @Test("the lifecycle handler makes the eager singletons at boot and disposes the container, awaited, at shutdown")
    func containerDisposedAtShutdown() async throws {
        let made = Counter()
        let closed = Counter()
        let container = Container()
        container.register(Pool.self, reuse: .eagerSingleton) { () -> Pool in
            made.increment()
            return Pool(closed: closed)
        }
        try await withApp { app in
            app.stimpak.use(container)
            app.get { req async throws -> String in
                _ = try await req.scope.require(Pool.self)
                return "ok"
            }
            try await app.asyncBoot()
            #expect(made.count == 1, "made at boot")
            try await app.testing().test(.GET, "/") { #expect($0.status == .ok) }
            #expect(!container.isDisposed, "open while the app runs")
        }
        #expect(made.count == 1)
        #expect(container.isDisposed)
        #expect(closed.count == 1, "the async hook was awaited")
    }

    @Test("a shutdown in a cancelled task disposes the container with its async hooks not cancelled")
    func cancelledShutdown() async throws {
        let closed = Counter()
        let container = Container()
        container.register(Pool.self, reuse: .singleton) { Pool(closed: closed) }
        _ = try await container.require(Pool.self)
        let handler = StimpakLifecycleHandler(container: container)
        try await withApp { app in
            let shutdown = Task {
                // Cancelled before it starts disposing: `Pool.dispose()` sleeps, and would throw if cancelled.
                withUnsafeCurrentTask { $0?.cancel() }
                await handler.shutdownAsync(app)
            }
            await shutdown.value
        }
        #expect(container.isDisposed)
        #expect(closed.count == 1, "the async hook ran to its end")
    }

    /// A synchronous program's app, made with `Application(_:)`, that resolves `Pool` and shuts down with
    /// `shutdown()`: Vapor's synchronous API, deprecated, on purpose.
    @available(*, deprecated, message: "uses Vapor's synchronous Application API on purpose")
    func runSynchronously(_ container: Container) throws {
        let app = Application(.testing)
        app.stimpak.use(container)
        _ = try container.require(Pool.self)
        app.shutdown()
    }

    @available(*, deprecated, message: "uses Vapor's synchronous Application API on purpose")
    @Test("a synchronous app.shutdown() disposes the container too, its async hooks started")
    func synchronousShutdown() async throws {
        let closed = Counter()
        let container = Container()
        container.register(Pool.self, reuse: .singleton) { Pool(closed: closed) }
        try runSynchronously(container)
        #expect(container.isDisposed)
        #expect(try await eventually { closed.count == 1 })
    }

    @Test("at shutdown the server drains first: a request under way finishes with its session, then the container is disposed")
    func shutdownDrainsTheServer() async throws {
        let container = ExampleApp.makeContainer()
        let started = AsyncStream.makeStream(of: Void.self)
        let app = try await Application.make(.testing)
        app.environment.arguments = ["vapor", "serve", "--hostname", "127.0.0.1", "--port", "0"]
        app.stimpak.use(container)
        app.get("slow") { req async throws -> String in
            let session = try await req.scope.require(DatabaseSession.self)
            started.continuation.yield()
            try await Task.sleep(for: .milliseconds(300))
            return try session.query("late")
        }
        try await app.startup()
        let pool = try await container.require(ConnectionPool.self)
        let port = try #require(app.http.server.shared.localAddress?.port)
        async let answer = exchange(port: port, "GET /slow HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        var iterator = started.stream.makeAsyncIterator()
        await iterator.next()
        #expect(!container.isDisposed)
        try await app.asyncShutdown()
        #expect(container.isDisposed)
        #expect(pool.sessionsClosed == 1)
        let response = try await answer
        #expect(response.hasPrefix("HTTP/1.1 200"), "\(response)")
        #expect(response.contains("late on session 1"), "\(response)")
    }

    @Test("an invalid container stops boot, naming the problem; a request-scoped consumer of the request is valid")
    func validationAtBoot() async throws {
        final class Captive: Sendable {
            init(request: Request) {}
        }
        final class PerRequest: Sendable {
            init(request: Request, id: RequestIdentifier, logger: Logger) {}
        }
        let log = RecordedLog()
        let invalid = Container()
        invalid.autowire(PerRequest.self, reuse: .inScope, PerRequest.init)
        invalid.autowire(Captive.self, reuse: .singleton, Captive.init)
        let app = try await Application.make(.testing, logger: log.logger())
        app.stimpak.use(invalid)
        await #expect(throws: InvalidContainer.self) { try await app.asyncBoot() }
        try await app.asyncShutdown()
        #expect(log.entries.contains { $0.level == .error && $0.message.contains("Captive") })

        let valid = Container()
        valid.autowire(PerRequest.self, reuse: .inScope, PerRequest.init)
        try await withApp { app in
            app.stimpak.use(valid)
            try await app.asyncBoot()
        }
        #expect(valid.isDisposed)
    }

    /// Serves `configure`'s app on 127.0.0.1 at a port of its own while `body` runs.
    func serving(configure: (Application) throws -> Void, test body: (Application, Int) async throws -> Void) async throws {
        try await withApp { app in
            try configure(app)
            try await app.server.start(address: .hostname("127.0.0.1", port: 0))
            do {
                try await body(app, try #require(app.http.server.shared.localAddress?.port))
            } catch {
                await app.server.shutdown()
                throw error
            }
            await app.server.shutdown()
        }
    }

    @Test("a client that disconnects mid-stream: the session is closed once the write fails")
    func clientDisconnectsMidStream() async throws {
        let container = ExampleApp.makeContainer()
        func configure(_ app: Application) { ExampleApp.configure(app, container: container) }
        try await serving(configure: configure) { app, port in
            let test = try StimpakTestScope(app)
            let received = try await exchange(
                port: port, "GET /stream?lines=100000 HTTP/1.1\r\nHost: localhost\r\n\r\n", readBytes: 200)
            #expect(received.hasPrefix("HTTP/1.1 200"))
            let pool = try await container.require(ConnectionPool.self)
            #expect(try await eventually { pool.sessionsClosed == 1 }, "closed once the client went away")
            #expect(pool.sessionsOpened == 1)
            try await test.requireNoLeaks()
            #expect(test.disposedRequestCount == 1)
        }
    }

    @Test("a client that disconnects before the response is written: the scope is disposed when the write fails")
    func clientDisconnectsBeforeTheResponse() async throws {
        let container = ExampleApp.makeContainer()
        let started = AsyncStream.makeStream(of: Void.self)
        func configure(_ app: Application) {
            ExampleApp.configure(app, container: container)
            app.get("slow") { req async throws -> Response in
                let session = try await req.scope.require(DatabaseSession.self)
                started.continuation.yield()
                try? await Task.sleep(for: .milliseconds(300))
                return Response(
                    status: .ok,
                    body: .init(managedAsyncStream: { writer in
                        try await writer.write(.buffer(ByteBuffer(string: try session.query("late"))))
                    }))
            }
        }
        try await serving(configure: configure) { app, port in
            let test = try StimpakTestScope(app)
            _ = try await exchange(port: port, "GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n", readBytes: 0)
            var iterator = started.stream.makeAsyncIterator()
            await iterator.next()
            let pool = try await container.require(ConnectionPool.self)
            #expect(pool.sessionsOpened == 1)
            #expect(try await eventually { pool.sessionsClosed == 1 })
            try await test.requireNoLeaks()
            #expect(test.disposedRequestCount == 1)
        }
    }

    /// Replaces every response with an empty one: the response the Stimpak middleware returns is dropped unwritten.
    struct DropsResponses: AsyncMiddleware {
        func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
            _ = try await next.respond(to: request)
            return Response(status: .noContent)
        }
    }

    @Test("a streamed response dropped unwritten (by an outer middleware): its scope is disposed when it is released")
    func droppedResponse() async throws {
        try await withApp { app in
            let container = ExampleApp.makeContainer()
            app.middleware.use(DropsResponses())
            ExampleApp.configure(app, container: container)
            let test = try StimpakTestScope(app)
            try await app.testing().test(.GET, "stream") { #expect($0.status == .noContent) }
            let pool = try await container.require(ConnectionPool.self)
            #expect(pool.sessionsOpened == 1)
            #expect(try await eventually { pool.sessionsClosed == 1 })
            try await test.requireNoLeaks()
        }
    }

    @Test("a test scope's module of fakes overrides the container's registrations for that test only")
    func testScopeInstallsFakes() async throws {
        let fake = ConnectionPool()
        let container = ExampleApp.makeContainer()
        try await withApp { app in
            ExampleApp.configure(app, container: container)
            let test = try StimpakTestScope(app, installing: FakePool(pool: fake))
            try await app.testing().test(.GET, "users/7") { #expect($0.status == .ok) }
            #expect(fake.sessionsOpened == 1)
            #expect(fake.sessionsClosed == 1)
            #expect(try await container.require(ConnectionPool.self).sessionsOpened == 0)
            try await test.requireNoLeaks()
        }
    }

    @Test("app.stimpak.use called twice: the first container stays, and the second call is logged")
    func useTwice() async throws {
        let log = RecordedLog()
        let first = Container()
        let app = try await Application.make(.testing, logger: log.logger())
        app.stimpak.use(first)
        app.stimpak.use(Container())
        #expect(app.stimpak.container === first)
        #expect(log.entries.contains { $0.level == .error && $0.message.contains("second time") })
        try await app.asyncShutdown()
    }

    @Test("a test scope needs the app's container: the error says to call app.stimpak.use")
    func testScopeWithoutContainer() async throws {
        try await withApp { app in
            #expect(throws: StimpakNotInUse.self) { try StimpakTestScope(app) }
            #expect("\(StimpakNotInUse())".contains("app.stimpak.use(container)"))
        }
    }

    @Test("validation with a request's values: the example is valid; a singleton that captures the request is not")
    func validateRequestScope() async throws {
        final class Captive: Sendable {
            init(request: Request) {}
        }
        try await withApp { app in
            ExampleApp.configure(app, container: ExampleApp.makeContainer())
            let report = await (try StimpakTestScope(app)).validateRequestScope()
            #expect(report.problems.isEmpty, "\(report)")
        }
        try await withApp { app in
            let broken = ExampleApp.makeContainer()
            broken.autowire(Captive.self, reuse: .singleton, Captive.init)
            app.stimpak.use(broken, validatesAtBoot: false)
            let report = await (try StimpakTestScope(app)).validateRequestScope()
            #expect(report.problems.contains { $0.path.first == ServiceKey(service: Captive.self) }, "\(report)")
        }
    }

    @Test("requireNoLeaks fails when an instance outlives its request scope or a request scope is left open, and waits for an instance released late")
    func leaksAreReported() async throws {
        final class Kept: Sendable {}
        final class Held: Sendable { let instances = Mutex<[Kept]>([]) }
        let kept = Held()
        try await withApp { app in
            let container = Container()
            container.register(Kept.self, reuse: .inScope) { Kept() }
            app.stimpak.use(container)
            app.get { req async throws -> String in
                let instance = try await req.scope.require(Kept.self)
                kept.instances.withLock { $0.append(instance) }
                return "ok"
            }
            let test = try StimpakTestScope(app)
            try await app.testing().test(.GET, "/") { #expect($0.status == .ok) }
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
    }
}
