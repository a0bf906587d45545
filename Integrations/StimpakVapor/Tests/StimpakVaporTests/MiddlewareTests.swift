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

    /// An async route's responder that counts the calls to its `EventLoopFuture` entry, which starts a task of
    /// its own, and answers with the current scope's `RequestIdentifier`.
    final class CountingResponder: AsyncResponder {
        let futureCalls = Atomic(0)

        func respond(to request: Request) -> EventLoopFuture<Response> {
            futureCalls.add(1, ordering: .relaxed)
            let promise = request.eventLoop.makePromise(of: Response.self)
            promise.completeWithTask { try await self.respond(to: request) }
            return promise.futureResult
        }

        func respond(to request: Request) async throws -> Response {
            let id = try await Scope.current.require(RequestIdentifier.self)
            return Response(status: .ok, body: .init(string: "\(id.value)"))
        }

        /// Adds a `GET` route at `path` that this responder answers.
        func serve(at path: PathComponent, in app: Application) {
            app.add(Route(method: .GET, path: [path], responder: self, requestType: Request.self, responseType: Response.self))
        }
    }

    /// A middleware that adds a header, after the Stimpak middleware in the chain.
    struct AddsHeader: AsyncMiddleware {
        func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
            let response = try await next.respond(to: request)
            response.headers.replaceOrAdd(name: "X-Added", value: "yes")
            return response
        }
    }

    @Test("an async route after the middleware runs in the middleware's own task, not in a second one")
    func asyncRouteRunsInTheMiddlewaresTask() async throws {
        let responder = CountingResponder()
        try await withApp { app in
            app.stimpak.use(Container())
            responder.serve(at: "direct", in: app)
            let test = try StimpakTestScope(app)
            for _ in 0..<3 {
                try await app.testing().test(.GET, "direct") { response in
                    #expect(response.status == .ok)
                    #expect(!response.body.string.isEmpty)
                }
            }
            #expect(responder.futureCalls.load(ordering: .relaxed) == 0, "the route's own task was started")
            #expect(test.disposedRequestCount == 3)
            try await test.requireNoLeaks()
        }
    }

    @Test("a middleware between the Stimpak middleware and the route: the chain runs through it, with the scope")
    func middlewareAfterStimpak() async throws {
        let responder = CountingResponder()
        try await withApp { app in
            app.stimpak.use(Container())
            app.middleware.use(AddsHeader())
            responder.serve(at: "direct", in: app)
            let test = try StimpakTestScope(app)
            try await app.testing().test(.GET, "direct") { response in
                #expect(response.status == .ok)
                #expect(response.headers.first(name: "X-Added") == "yes")
            }
            #expect(test.disposedRequestCount == 1)
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
