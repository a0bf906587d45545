// The example server's handlers without a container, for the load script's comparison: the example's own
// services (ServerExampleServices), made by hand. The pool is a global, each request opens its session and
// closes it (awaited) once its response is made or, for the streamed body, once the body is written; the
// request's values are passed by hand. `PORT` (default 8081) as for stimpak-vapor-example.
import ServerExampleServices
import Vapor

/// Opens a session for the request, runs `body`, and closes the session once it returns or throws.
func withSession<Result>(
    _ pool: ConnectionPool, _ req: Request, _ body: (DatabaseSession, RequestInfo) async throws -> Result
) async throws -> Result {
    let session = await DatabaseSession.open(pool: pool)
    let info = RequestInfo(id: req.id, path: req.url.path)
    do {
        let result = try await body(session, info)
        try? await session.close()
        return result
    } catch {
        try? await session.close()
        throw error
    }
}

var environment = try Environment.detect()
try LoggingSystem.bootstrap(from: &environment)
let app = try await Application.make(environment)
app.http.server.configuration.hostname = "127.0.0.1"
app.http.server.configuration.port = Environment.get("PORT").flatMap(Int.init) ?? 8081
let pool = ConnectionPool()

app.get("users", ":id") { req async throws -> String in
    try await withSession(pool, req) { session, info in
        let user = try req.parameters.require("id", as: Int.self)
        return try session.query("select user \(user)") + " (request \(info.id))\n"
    }
}
app.get("orders") { req async throws -> String in
    try await withSession(pool, req) { session, info in
        try session.query("select orders") + " for \(info.path), one session: true\n"
    }
}
app.get("stream") { req async throws -> Response in
    let session = await DatabaseSession.open(pool: pool)
    let lines = req.query[Int.self, at: "lines"] ?? 3
    return Response(
        status: .ok,
        body: .init(managedAsyncStream: { writer in
            do {
                for line in 0..<lines {
                    try await Task.sleep(for: .milliseconds(1))
                    try await writer.write(.buffer(ByteBuffer(string: try session.query("line \(line)") + "\n")))
                }
            } catch {
                try? await session.close()
                throw error
            }
            try? await session.close()
        }))
}
app.get("stats") { _ async -> String in
    "open_scopes=0 sessions_opened=\(pool.sessionsOpened) sessions_closed=\(pool.sessionsClosed)\n"
}

do {
    try await app.execute()
} catch {
    try? await app.asyncShutdown()
    throw error
}
try await app.asyncShutdown()
