// The example server: `swift run stimpak-vapor-example` (PORT, default 8080; APP_ENV=development puts
// resolution errors' messages into the responses; LOG_LEVEL as for any Vapor app). Stop it with Ctrl-C: the
// server drains, then the container is disposed.
import StimpakVaporExampleApp
import Vapor

var environment = try Environment.detect()
try LoggingSystem.bootstrap(from: &environment)
let app = try await Application.make(environment)
app.http.server.configuration.hostname = "127.0.0.1"
app.http.server.configuration.port = Environment.get("PORT").flatMap(Int.init) ?? 8080
ExampleApp.configure(
    app, container: ExampleApp.makeContainer(), showsErrorDetails: Environment.get("APP_ENV") == "development")
do {
    try await app.execute()
} catch {
    try? await app.asyncShutdown()
    throw error
}
try await app.asyncShutdown()
