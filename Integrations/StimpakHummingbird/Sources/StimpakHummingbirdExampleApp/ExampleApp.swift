public import Hummingbird
import ServerExampleModule
import ServerExampleServices
public import Stimpak
public import StimpakHummingbird

/// The example server: its container, its routes, its application.
public enum ExampleApp {
    /// A container with the app's registrations.
    public static func makeContainer() -> Container {
        let container = Container()
        container.install(ExampleModule(request: Request.self, id: RequestIdentifier.self) { $0.uri.path })
        return container
    }

    /// Adds the app's three routes, and `/stats` for the load script.
    public static func addRoutes<Context: StimpakRequestContext>(to router: Router<Context>, container: Container) {
        router.get("/users/:id") { request, context -> String in
            let scope = try context.scope
            let session = try await scope.require(DatabaseSession.self)
            let info = try await scope.require(RequestInfo.self)
            let user = try context.parameters.require("id", as: Int.self)
            return try session.query("select user \(user)") + " (request \(info.id))\n"
        }
        router.get("/orders") { request, context -> String in
            let scope = try context.scope
            let session = try await scope.require(DatabaseSession.self)
            let again = try await scope.require(DatabaseSession.self)
            let info = try await scope.require(RequestInfo.self)
            return try session.query("select orders") + " for \(info.path), one session: \(session === again)\n"
        }
        // A body streamed after the handler returned: every line uses the request's session.
        router.get("/stream") { request, context -> Response in
            let session = try await context.scope.require(DatabaseSession.self)
            let lines = request.uri.queryParameters.get("lines", as: Int.self) ?? 3
            return Response(
                status: .ok,
                body: ResponseBody { writer in
                    for line in 0..<lines {
                        try await Task.sleep(for: .milliseconds(1))
                        try await writer.write(ByteBuffer(string: try session.query("line \(line)") + "\n"))
                    }
                    try await writer.finish(nil)
                })
        }
        // The open request scopes other than this request's own.
        router.get("/stats") { _, context -> String in
            let pool = try container.require(ConnectionPool.self)
            let own = try context.scope
            let open = container.openScopes.filter { $0 !== own }.count
            return "open_scopes=\(open) sessions_opened=\(pool.sessionsOpened) sessions_closed=\(pool.sessionsClosed)\n"
        }
    }

    /// The application: the router with the middleware and the routes, and the container's service.
    public static func makeApplication(
        container: Container, configuration: ApplicationConfiguration, showsErrorDetails: Bool
    ) -> some ApplicationProtocol {
        let router = Router(context: BasicStimpakRequestContext.self)
        router.add(middleware: StimpakMiddleware(container: container, showsErrorDetails: showsErrorDetails))
        addRoutes(to: router, container: container)
        var app = Application(router: router, configuration: configuration)
        app.addServices(StimpakService(container: container, logger: app.logger))
        return app
    }
}
