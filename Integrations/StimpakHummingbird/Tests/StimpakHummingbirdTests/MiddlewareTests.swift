import Hummingbird
import HummingbirdTesting
import Logging
import ServerExampleServices
import ServerTestSupport
import Stimpak
import StimpakHummingbird
import StimpakHummingbirdExampleApp
import StimpakHummingbirdTesting
import Testing

/// A request scope per request: isolation, disposal however the request ends, errors, the context.
@Suite(.timeLimit(.minutes(2))) struct MiddlewareTests {
    /// The example's routes behind a test scope's middleware, plus routes that throw.
    static func makeApp(_ test: StimpakTestScope, logger: Logger? = nil) -> some ApplicationProtocol {
        let router = Router(context: BasicStimpakRequestContext.self)
        router.add(middleware: test.middleware())
        ExampleApp.addRoutes(to: router, container: test.container)
        router.get("/fails") { _, context -> String in
            _ = try await context.scope.require(DatabaseSession.self)
            throw HTTPError(.badRequest, message: "refused")
        }
        router.get("/missing") { _, context -> String in
            try context.scope.require(Unregistered.self).name
        }
        return Application(router: router, logger: logger)
    }

    struct Unregistered: Sendable {
        let name: String
    }

    @Test("100 concurrent requests: a session each, each closed exactly once, no scope left, nothing survives")
    func concurrentRequestsAreIsolated() async throws {
        let test = StimpakTestScope(container: ExampleApp.makeContainer())
        let bodies = try await Self.makeApp(test).test(.router) { client in
            try await sendExampleRequests(100) { path in
                try await client.execute(uri: "/" + path, method: .get) { response in
                    #expect(response.status == .ok)
                    return String(buffer: response.body)
                }
            }
        }
        try await expectOneSessionPerRequest(bodies, container: test.container, testScope: test.scope)
        #expect(test.disposedRequestCount == 100)
        try await test.requireNoLeaks()
    }

    @Test("a body streamed after the handler returned uses the live session; the scope is disposed after it")
    func streamedBody() async throws {
        let test = StimpakTestScope(container: ExampleApp.makeContainer())
        try await Self.makeApp(test).test(.router) { client in
            try await client.execute(uri: "/stream?lines=5", method: .get) { response in
                #expect(response.status == .ok)
                let lines = String(buffer: response.body).split(separator: "\n")
                #expect(lines.count == 5)
                #expect(lines.allSatisfy { $0.contains("on session 1") })
            }
        }
        let pool = try await test.container.require(ConnectionPool.self)
        #expect(pool.sessionsClosed == 1)
        #expect(test.openRequestCount == 0)
        try await test.requireNoLeaks()
    }

    @Test("a handler that throws: its error goes on, and its scope is disposed")
    func throwingHandler() async throws {
        let test = StimpakTestScope(container: ExampleApp.makeContainer())
        try await Self.makeApp(test).test(.router) { client in
            try await client.execute(uri: "/fails", method: .get) { response in
                #expect(response.status == .badRequest)
                #expect(String(buffer: response.body).contains("refused"))
            }
        }
        #expect(try await test.container.require(ConnectionPool.self).sessionsClosed == 1)
        #expect(test.disposedRequestCount == 1)
        #expect(test.openRequestCount == 0)
        try await test.requireNoLeaks()
    }

    @Test(
        "a resolution error becomes a 500 that says what failed in development, only the request id otherwise, and is logged at error level with the request id",
        arguments: [true, false])
    func resolutionError(showsErrorDetails: Bool) async throws {
        let log = RecordedLog()
        let container = ExampleApp.makeContainer()
        let router = Router(context: BasicStimpakRequestContext.self)
        router.add(middleware: StimpakMiddleware(container: container, showsErrorDetails: showsErrorDetails))
        router.get("/missing") { _, context -> String in try context.scope.require(Unregistered.self).name }
        try await Application(router: router, logger: log.logger()).test(.router) { client in
            try await client.execute(uri: "/missing", method: .get) { response in
                #expect(response.status == .internalServerError)
                let body = String(buffer: response.body)
                #expect(body.contains("Unregistered") == showsErrorDetails, "\(body)")
                #expect(body.contains("request "))
            }
        }
        let error = log.expectOneError(requestIDKey: "hb.request.id")
        #expect(error?.metadata["stimpak.error"]?.description.contains("Unregistered") == true)
        #expect(container.openScopeCount == 0)
    }

    @Test("a resolution error thrown while a streamed body is written is logged at error level with the request id")
    func resolutionErrorWhileWritingTheBody() async throws {
        let log = RecordedLog()
        let container = ExampleApp.makeContainer()
        let router = Router(context: BasicStimpakRequestContext.self)
        router.add(middleware: StimpakMiddleware(container: container))
        router.get("/late") { _, context -> Response in
            let scope = try context.scope
            return Response(
                status: .ok,
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: "first line\n"))
                    try await writer.write(ByteBuffer(string: try scope.require(Unregistered.self).name))
                    try await writer.finish(nil)
                })
        }
        try await Application(router: router, logger: log.logger()).test(.live) { client in
            _ = try? await client.execute(uri: "/late", method: .get) { _ in }
        }
        #expect(try await eventually { log.entries.contains { $0.level == .error } })
        let error = log.expectOneError(requestIDKey: "hb.request.id")
        #expect(error?.message.contains("while writing the response body") == true)
        #expect(error?.metadata["stimpak.error"]?.description.contains("Unregistered") == true)
        #expect(try await eventually { container.openScopeCount == 0 })
    }

    @Test("a disposal hook that throws is logged at error level with the request id")
    func disposalFailureIsLogged() async throws {
        final class Broken: Disposable {
            func dispose() throws { throw SessionClosed() }
        }
        let log = RecordedLog()
        let container = Container()
        container.register(Broken.self, reuse: .inScope) { Broken() }
        let router = Router(context: BasicStimpakRequestContext.self)
        router.add(middleware: StimpakMiddleware(container: container))
        router.get("/") { _, context -> String in
            _ = try context.scope.require(Broken.self)
            return "ok"
        }
        try await Application(router: router, logger: log.logger()).test(.router) { client in
            try await client.execute(uri: "/", method: .get) { #expect($0.status == .ok) }
        }
        let error = log.expectOneError(requestIDKey: "hb.request.id")
        #expect(error?.message.contains("Broken") == true)
    }

    @Test("context.scope without the middleware: a 500 that says to add it")
    func missingMiddleware() async throws {
        let router = Router(context: BasicStimpakRequestContext.self)
        router.get("/") { _, context -> String in "\(try context.scope)" }
        try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .internalServerError)
                #expect(String(buffer: response.body).contains("StimpakMiddleware"))
            }
        }
    }

    @Test("the handler's task has the request scope as the current scope, with the request's values")
    func currentScopeAndProvidedValues() async throws {
        let container = Container()
        let router = Router(context: BasicStimpakRequestContext.self)
        router.add(middleware: StimpakMiddleware(container: container))
        router.get("/current") { request, context -> String in
            let current = try Scope.current
            let id: RequestIdentifier = try inject()
            let logger: Logger = try inject()
            let provided: Request = try inject()
            return "\(current === (try context.scope)) \(id == RequestIdentifier(context.id))"
                + " \(logger[metadataKey: "hb.request.id"]?.description == context.id) \(provided.uri.path)"
        }
        try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "/current", method: .get) { response in
                #expect(String(buffer: response.body) == "true true true /current")
            }
        }
    }
}
