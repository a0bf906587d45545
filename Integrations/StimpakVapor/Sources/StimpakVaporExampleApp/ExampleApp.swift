import ServerExampleModule
import ServerExampleServices
public import Stimpak
import StimpakVapor
public import Vapor

/// The example server: its container, its routes, its configuration.
public enum ExampleApp {
    /// A container with the app's registrations.
    public static func makeContainer() -> Container {
        let container = Container()
        container.install(ExampleModule(request: Request.self, id: RequestIdentifier.self) { $0.url.path })
        return container
    }

    /// Gives `app` the container (`app.stimpak.use`) and the routes.
    /// - Parameters:
    ///   - app: The app.
    ///   - container: Its container.
    ///   - showsErrorDetails: Whether a resolution error's message goes into the 500 response; nil for the
    ///     environment's default.
    public static func configure(_ app: Application, container: Container, showsErrorDetails: Bool? = nil) {
        app.stimpak.use(container, showsErrorDetails: showsErrorDetails)
        addRoutes(to: app, container: container)
    }

    /// Adds the app's three routes, and `/stats` for the load script.
    public static func addRoutes(to routes: some RoutesBuilder, container: Container) {
        routes.get("users", ":id") { req async throws -> String in
            let session = try await req.scope.require(DatabaseSession.self)
            let info = try await req.scope.require(RequestInfo.self)
            let user = try req.parameters.require("id", as: Int.self)
            return try session.query("select user \(user)") + " (request \(info.id))\n"
        }
        routes.get("orders") { req async throws -> String in
            let scope = try req.scope
            let session = try await scope.require(DatabaseSession.self)
            let again = try await scope.require(DatabaseSession.self)
            let info = try await scope.require(RequestInfo.self)
            return try session.query("select orders") + " for \(info.path), one session: \(session === again)\n"
        }
        // A body streamed after the handler returned: every line uses the request's session.
        routes.get("stream") { req async throws -> Response in
            let session = try await req.scope.require(DatabaseSession.self)
            let lines = req.query[Int.self, at: "lines"] ?? 3
            return Response(
                status: .ok,
                body: .init(managedAsyncStream: { writer in
                    for line in 0..<lines {
                        try await Task.sleep(for: .milliseconds(1))
                        try await writer.write(.buffer(ByteBuffer(string: try session.query("line \(line)") + "\n")))
                    }
                }))
        }
        // The open request scopes other than this request's own.
        routes.get("stats") { req async throws -> String in
            let pool = try await container.require(ConnectionPool.self)
            let own = try req.scope
            let open = container.openScopes.filter { $0 !== own }.count
            return "open_scopes=\(open) sessions_opened=\(pool.sessionsOpened) sessions_closed=\(pool.sessionsClosed)\n"
        }
    }
}
