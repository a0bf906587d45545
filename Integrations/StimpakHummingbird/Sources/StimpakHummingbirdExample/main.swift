// The example server: `swift run stimpak-hummingbird-example` (PORT, default 8080; APP_ENV=development puts
// resolution errors' messages into the responses). Stop it with Ctrl-C: the container is disposed once the
// server has drained.
import Hummingbird
import StimpakHummingbirdExampleApp

let environment = Environment()
let port = environment.get("PORT", as: Int.self) ?? 8080
let app = ExampleApp.makeApplication(
    container: ExampleApp.makeContainer(),
    configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port), serverName: "stimpak-example"),
    showsErrorDetails: environment.get("APP_ENV") == "development")
try await app.runService()
