// The example server's handlers without a container, for the load script's comparison: the example's own
// services (ServerExampleServices), made by hand. The pool is a global, each request opens its session and
// closes it (awaited) once the response is written, and the request's values are passed by hand. `PORT` as
// for stimpak-hummingbird-example.
import Hummingbird
import ServerExampleServices

/// Opens a session for the request, runs `body`, and closes the session once the response is written.
func withSession(
    _ pool: ConnectionPool, _ request: Request, _ context: BasicRequestContext,
    _ body: (DatabaseSession, RequestInfo) async throws -> Response
) async throws -> Response {
    let session = await DatabaseSession.open(pool: pool)
    let info = RequestInfo(id: context.id, path: request.uri.path)
    var response: Response
    do {
        response = try await body(session, info)
    } catch {
        try? await session.close()
        throw error
    }
    if response.body.contentLength == nil {
        let body = response.body
        response.body = ResponseBody { writer in
            do { try await body.write(writer) } catch {
                try? await session.close()
                throw error
            }
            try? await session.close()
        }
    } else {
        try? await session.close()
    }
    return response
}

let pool = ConnectionPool()
let router = Router()
router.get("/users/:id") { request, context in
    try await withSession(pool, request, context) { session, info in
        let user = try context.parameters.require("id", as: Int.self)
        return Response(
            status: .ok, headers: [.contentType: "text/plain; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: try session.query("select user \(user)") + " (request \(info.id))\n")))
    }
}
router.get("/orders") { request, context in
    try await withSession(pool, request, context) { session, info in
        Response(
            status: .ok, headers: [.contentType: "text/plain; charset=utf-8"],
            body: ResponseBody(
                byteBuffer: ByteBuffer(string: try session.query("select orders") + " for \(info.path), one session: true\n")))
    }
}
router.get("/stream") { request, context in
    try await withSession(pool, request, context) { session, _ in
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
}
router.get("/stats") { _, _ in
    "open_scopes=0 sessions_opened=\(pool.sessionsOpened) sessions_closed=\(pool.sessionsClosed)\n"
}

let port = Environment().get("PORT", as: Int.self) ?? 8081
let app = Application(
    router: router,
    configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port), serverName: "hand-written-example"))
try await app.runService()
