import Logging
import ServerExampleServices
import ServerTestSupport
import Stimpak
import StimpakVapor
import StimpakVaporExampleApp
import StimpakVaporTesting
import Synchronization
import Testing
import VaporTesting

/// A request scope per request: isolation, disposal however the request ends, errors, the current scope.
@Suite(.timeLimit(.minutes(2))) struct MiddlewareTests {
    /// The example's routes, plus routes that throw.
    static func configure(_ app: Application, container: Container = ExampleApp.makeContainer()) {
        ExampleApp.configure(app, container: container, showsErrorDetails: true)
        app.get("fails") { req async throws -> String in
            _ = try await req.scope.require(DatabaseSession.self)
            throw Abort(.badRequest, reason: "refused")
        }
        app.get("missing") { req async throws -> String in
            try await req.scope.require(Unregistered.self).name
        }
    }

    struct Unregistered: Sendable {
        let name: String
    }

    @Test("100 concurrent requests: a session each, each closed exactly once, no scope left, nothing survives")
    func concurrentRequestsAreIsolated() async throws {
        try await withApp { app in
            Self.configure(app)
            let test = try StimpakTestScope(app)
            let tester = try app.testing()
            let bodies = try await sendExampleRequests(100) { path in
                let response = try await tester.sendRequest(.GET, path)
                #expect(response.status == .ok)
                return response.body.string
            }
            try await expectOneSessionPerRequest(bodies, container: test.container, testScope: test.scope)
            #expect(test.disposedRequestCount == 100)
            try await test.requireNoLeaks()
        }
    }

    @Test("a body streamed after the handler returned uses the live session; the scope is disposed after it")
    func streamedBody() async throws {
        try await withApp { app in
            Self.configure(app)
            let test = try StimpakTestScope(app)
            try await app.testing().test(.GET, "stream?lines=5") { response in
                #expect(response.status == .ok)
                let lines = response.body.string.split(separator: "\n")
                #expect(lines.count == 5)
                #expect(lines.allSatisfy { $0.contains("on session 1") }, "\(lines)")
            }
            let pool = try await test.container.require(ConnectionPool.self)
            #expect(try await eventually { pool.sessionsClosed == 1 })
            #expect(pool.sessionsOpened == 1)
            try await test.requireNoLeaks()
            #expect(test.disposedRequestCount == 1)
        }
    }

    @Test("a handler that throws: its error goes on, and its scope is disposed")
    func throwingHandler() async throws {
        try await withApp { app in
            Self.configure(app)
            let test = try StimpakTestScope(app)
            try await app.testing().test(.GET, "fails") { response in
                #expect(response.status == .badRequest)
                #expect(response.body.string.contains("refused"))
            }
            #expect(try await test.container.require(ConnectionPool.self).sessionsClosed == 1)
            #expect(test.disposedRequestCount == 1)
            #expect(test.openRequestCount == 0)
            try await test.requireNoLeaks()
        }
    }

    @Test(
        "a resolution error becomes a 500 that says what failed in development, only the request id otherwise, and is logged at error level with the request id",
        arguments: [true, false])
    func resolutionError(showsErrorDetails: Bool) async throws {
        let log = RecordedLog()
        let container = ExampleApp.makeContainer()
        let app = try await Application.make(.testing, logger: log.logger())
        app.stimpak.use(container, showsErrorDetails: showsErrorDetails)
        app.get("missing") { req async throws -> String in try await req.scope.require(Unregistered.self).name }
        do {
            try await app.testing().test(.GET, "missing") { response in
                #expect(response.status == .internalServerError)
                let body = response.body.string
                #expect(body.contains("Unregistered") == showsErrorDetails, "\(body)")
                #expect(body.contains("request "))
            }
        } catch {
            try await app.asyncShutdown()
            throw error
        }
        try await app.asyncShutdown()
        let error = log.expectOneError(requestIDKey: "request-id")
        #expect(error?.metadata["stimpak.error"]?.description.contains("Unregistered") == true)
    }

    @Test("a disposal hook that throws is logged at error level with the request id")
    func disposalFailureIsLogged() async throws {
        final class Broken: Disposable {
            func dispose() throws { throw SessionClosed() }
        }
        let log = RecordedLog()
        let container = Container()
        container.register(Broken.self, reuse: .inScope) { Broken() }
        let app = try await Application.make(.testing, logger: log.logger())
        app.stimpak.use(container)
        app.get { req async throws -> String in
            _ = try await req.scope.require(Broken.self)
            return "ok"
        }
        try await app.testing().test(.GET, "/") { #expect($0.status == .ok) }
        try await app.asyncShutdown()
        let error = log.expectOneError(requestIDKey: "request-id")
        #expect(error?.message.contains("Broken") == true)
    }

    /// For each ``Closing`` disposed, whether its hook ran on its request's event loop.
    final class Closings: Sendable {
        let onEventLoop = Mutex<[Bool]>([])
    }

    /// An `AsyncDisposable` whose hook suspends before it returns (so that it is awaited, not only started),
    /// records whether it ran on its request's event loop, and throws when told to.
    final class Closing: AsyncDisposable, Sendable {
        let eventLoop: any EventLoop
        let closings: Closings
        let fails: Bool

        init(request: Request, closings: Closings, fails: Bool) {
            eventLoop = request.eventLoop
            self.closings = closings
            self.fails = fails
        }

        func dispose() async throws {
            try await Task.sleep(for: .milliseconds(20))
            let onEventLoop = eventLoop.inEventLoop
            closings.onEventLoop.withLock { $0.append(onEventLoop) }
            if fails { throw SessionClosed() }
        }
    }

    @Test(
        "an async disposal hook is awaited before the response goes on, on the request's event loop, when the handler returns and when it throws",
        arguments: [false, true])
    func asyncHookIsAwaited(handlerThrows: Bool) async throws {
        let closings = Closings()
        try await withApp { app in
            let container = Container()
            container.register(Closing.self, reuse: .inScope) { (scope: Scope) in
                Closing(request: try scope.require(Request.self), closings: closings, fails: false)
            }
            app.stimpak.use(container)
            app.get { req async throws -> String in
                _ = try await req.scope.require(Closing.self)
                if handlerThrows { throw Abort(.badRequest, reason: "refused") }
                return "ok"
            }
            let test = try StimpakTestScope(app)
            try await app.testing().test(.GET, "/") { #expect($0.status == (handlerThrows ? .badRequest : .ok)) }
            #expect(closings.onEventLoop.withLock { $0 } == [true], "closed once, awaited, on the event loop")
            #expect(test.disposedRequestCount == 1)
            try await test.requireNoLeaks()
        }
    }

    @Test("an async disposal hook that throws is logged at error level with the request id", arguments: [false, true])
    func asyncDisposalFailureIsLogged(handlerThrows: Bool) async throws {
        let log = RecordedLog()
        let closings = Closings()
        let container = Container()
        container.register(Closing.self, reuse: .inScope) { (scope: Scope) in
            Closing(request: try scope.require(Request.self), closings: closings, fails: true)
        }
        let app = try await Application.make(.testing, logger: log.logger())
        app.stimpak.use(container)
        app.get { req async throws -> String in
            _ = try await req.scope.require(Closing.self)
            if handlerThrows { throw Abort(.badRequest, reason: "refused") }
            return "ok"
        }
        do {
            try await app.testing().test(.GET, "/") { #expect($0.status == (handlerThrows ? .badRequest : .ok)) }
        } catch {
            try await app.asyncShutdown()
            throw error
        }
        let errors = log.entries.filter { $0.level == .error }
        try await app.asyncShutdown()
        #expect(closings.onEventLoop.withLock { $0.count } == 1)
        #expect(errors.count == 1, "logged before the response went on: \(errors.map(\.message))")
        let error = log.expectOneError(requestIDKey: "request-id")
        #expect(error?.message.contains("Closing") == true, "\(error?.message ?? "")")
        #expect(error?.metadata["stimpak.error"]?.description.contains("closed") == true)
    }

    /// Whether the current scope here is `request`'s scope, open.
    static func isCurrent(_ request: Request) -> Bool {
        guard let scope = try? request.scope, let current = try? Scope.current else { return false }
        return current === scope
    }

    /// Answers whether the request's scope is the current one in its own task, as an `AsyncMiddleware` runs,
    /// before and after the rest of the chain, in a header.
    struct ReadsCurrentScope: AsyncMiddleware {
        func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
            let before = MiddlewareTests.isCurrent(request)
            let response = try await next.respond(to: request)
            let after = MiddlewareTests.isCurrent(request)
            response.headers.replaceOrAdd(name: "X-Current-Scope", value: "\(before) \(after)")
            return response
        }
    }

    @Test(
        "the bound scope is inherited by an AsyncMiddleware after the Stimpak middleware, and by the async route's task and its child tasks, not by a detached task"
    )
    func bindingIsInherited() async throws {
        try await withApp { app in
            app.stimpak.use(Container())
            let routes = app.grouped(ReadsCurrentScope())
            routes.get("async") { req async throws -> String in
                let scope = try req.scope
                try await Task.sleep(for: .milliseconds(1))
                async let child = (try? Scope.current) === scope
                let detached = await Task.detached { (try? Scope.current) != nil }.value
                return "\((try Scope.current) === scope) \(await child) \(detached)"
            }
            try await app.testing().test(.GET, "async") { response in
                #expect(response.body.string == "true true false", "a detached task does not inherit it")
                #expect(response.headers.first(name: "X-Current-Scope") == "true true")
            }
        }
    }

    @Test("a synchronous route straight after the Stimpak middleware runs inside the binding, on the event loop")
    func bindingInASynchronousRoute() async throws {
        try await withApp { app in
            app.stimpak.use(Container())
            // Served: Vapor calls a synchronous route's closure back on the event loop once it has the body, so
            // it runs inside the binding when the chain runs there, as it does for a server's requests (not
            // behind an AsyncMiddleware, whose task calls it from the concurrency pool).
            app.get("sync") { req throws -> String in "current: \(Self.isCurrent(req))" }
            try await app.server.start(address: .hostname("127.0.0.1", port: 0))
            do {
                let port = try #require(app.http.server.shared.localAddress?.port)
                let response = try await exchange(
                    port: port, "GET /sync HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                #expect(response.hasSuffix("current: true"), "\(response)")
            } catch {
                await app.server.shutdown()
                throw error
            }
            await app.server.shutdown()
        }
    }

    @Test("the Stimpak middleware in a route group, after an AsyncMiddleware: the async route's task has the binding")
    func bindingInAGroupAfterAnAsyncMiddleware() async throws {
        try await withApp { app in
            let container = Container()
            let routes = app.grouped(ReadsCurrentScope()).grouped(StimpakMiddleware(container: container))
            routes.get("current") { req async throws -> String in "\(Self.isCurrent(req))" }
            try await app.testing().test(.GET, "current") { response in
                #expect(response.body.string == "true")
                #expect(response.headers.first(name: "X-Current-Scope") == "false false", "bound inside, not outside")
            }
        }
    }

    @Test("req.scope without the middleware: a 500 that says to call app.stimpak.use")
    func missingMiddleware() async throws {
        try await withApp { app in
            app.get { req async throws -> String in "\(try req.scope)" }
            try await app.testing().test(.GET, "/") { response in
                #expect(response.status == .internalServerError)
                #expect(response.body.string.contains("app.stimpak.use(container)"), "\(response.body.string)")
            }
        }
    }

    /// A handler's object whose property is injected from the current scope when the handler makes it.
    struct Handler {
        @Injected var id: RequestIdentifier
    }

    @Test("the handler's task has the request scope as the current scope, with the request's values")
    func currentScopeAndProvidedValues() async throws {
        try await withApp { app in
            app.stimpak.use(Container())
            app.get("current") { req async throws -> String in
                let current = try Scope.current
                let id: RequestIdentifier = try await inject()
                let logger: Logger = try await inject()
                let provided: Request = try await inject()
                return "\(current === (try req.scope)) \(id == RequestIdentifier(req.id)) \(Handler().id == id)"
                    + " \(logger[metadataKey: "request-id"]?.description == req.id) \(provided.url.path)"
            }
            try await app.testing().test(.GET, "current") { response in
                #expect(response.body.string == "true true true true /current")
            }
        }
    }

    @Test("without binding, req.scope opens the scope on first use: a route that resolves nothing opens none")
    func lazyScope() async throws {
        try await withApp { app in
            let container = ExampleApp.makeContainer()
            app.stimpak.use(container, bindsCurrentScope: false)
            ExampleApp.addRoutes(to: app, container: container)
            app.get("plain") { _ in "plain" }
            let test = try StimpakTestScope(app)
            try await app.testing().test(.GET, "plain") { #expect($0.status == .ok) }
            #expect(test.disposedRequestCount == 0, "no scope opened")
            try await app.testing().test(.GET, "orders") { #expect($0.status == .ok) }
            #expect(test.disposedRequestCount == 1)
            #expect(try await container.require(ConnectionPool.self).sessionsClosed == 1)
            try await test.requireNoLeaks()
        }
    }

    @Test("req.scope read after the response was sent: a 500 that says to resolve in the handler")
    func scopeAfterTheResponse() async throws {
        let kept = Mutex<Request?>(nil)
        try await withApp { app in
            app.stimpak.use(Container())
            app.get { req async throws -> String in
                kept.withLock { $0 = req }
                return "\(try req.scope)"
            }
            try await app.testing().test(.GET, "/") { #expect($0.status == .ok) }
            let request = try #require(kept.withLock { $0 })
            #expect {
                _ = try request.scope
            } throws: { error in
                (error as? MissingRequestScope)?.cause == .responseSent && "\(error)".contains("Fix: resolve")
            }
        }
    }
}
