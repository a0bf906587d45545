// The types the documentation's snippets use, declared once so that every snippet compiles as written.
// Nothing here runs: building the target is the check.
import Foundation
import Stimpak
import StimpakConfiguration

final class Foo: Sendable { init() {} }

final class Configuration: Sendable { init() {} }

final class ConnectionPool: Sendable { init() {} }

final class Connection: Sendable {
    init() {}
    func close() {}
}

final class Database: Sendable {
    init(url: URL) {}
    static func connect() throws -> Database { Database(url: URL(fileURLWithPath: "/")) }
    static func connect(_ url: URL) async throws -> Database { Database(url: url) }
}

struct HTTPRequest: Sendable {
    let path: String
}

final class Session: Sendable {
    init(pool: ConnectionPool) {}
    init(_ database: Database) {}
    func handle() async throws -> String { "" }
    func handle(_ request: HTTPRequest) throws -> String { request.path }
}

final class ShoppingCart: Sendable { init() {} }

final class OrderHandler: Sendable {
    init(session: Session, cart: ShoppingCart) {}
    func handle(_ request: HTTPRequest) async throws -> String { request.path }
}

final class RequestHandler: Disposable, Sendable {
    init(session: Session) {}
    func dispose() {}
}

final class Cache: Sendable {
    init() {}
    init(sessions: Provider<Session>) {}
}

final class Clock: Instantiable, Sendable { init() {} }

protocol TimeSource: Sendable {}
final class SystemClock: TimeSource, Instantiable { init() {} }

final class Logger: Sendable { init() {} }

final class Greeter: Sendable { init(_ clock: Clock, _ log: Logger) {} }

protocol ServiceA: Sendable {}
final class ServiceAImpl: ServiceA, Instantiable { init() {} }
final class ServiceB: Sendable {}
final class ServiceC: Sendable {}
protocol ServiceE: Sendable {}
final class ServiceEImpl: ServiceE {
    init(a: any ServiceA, b: ServiceB, c: ServiceC?) {}
}

final class HTTPClient: Sendable { init() {} }
final class API: Sendable { init(client: HTTPClient) {} }
struct PersistenceModule: Module {
    func register(in container: Container) {}
}

final class PDFExporter: Sendable {}
final class OrderLine: Sendable {
    let sku: String
    let quantity: Int
    init(_ sku: String, _ quantity: Int) {
        self.sku = sku
        self.quantity = quantity
    }
}
final class ReportScreen: Sendable {
    let exporter: Lazy<PDFExporter>
    init(_ exporter: Lazy<PDFExporter>) { self.exporter = exporter }
}
/// A screen whose wrappers its registration declares (the Servers and property-wrapper articles).
final class OrderScreen: @unchecked Sendable {  // the wrappers are set once, when it is made
    @Injected var repository: OrderRepository
    @LazyInjected var exporter: PDFExporter
}
protocol Plugin: Sendable {}

protocol OrderStore: Sendable {}
final class LoggingOrderStore: OrderStore {
    init(_ inner: any OrderStore, log: Logger) {}
}
final class CachingOrderStore: OrderStore {
    init(_ inner: any OrderStore) {}
}

final class ImageCache: Sendable { init() {} }
final class UnitOfWork: Sendable { init() {} }
final class Repository: Sendable {
    init(_ unitOfWork: UnitOfWork) {}
    func logged() -> Repository { self }
}
final class OrderService: Sendable {
    init(_ unitOfWork: UnitOfWork, _ repository: Repository) {}
}
final class SMTPSettings: Sendable {}

final class OrderRepository: Sendable {
    func save(log: Logger) async throws {}
}
final class Coordinator: Sendable {}
final class Analytics: Sendable {}
class Api: @unchecked Sendable { init() {} }  // no stored state
final class MockApi: Api, @unchecked Sendable {}

protocol PaymentGateway: Sendable {}
struct FakeGateway: PaymentGateway {
    let declines: Bool
}
struct Receipt: Sendable {
    let isDeclined: Bool
}
final class Checkout: Sendable {
    let gateway: any PaymentGateway
    init(gateway: any PaymentGateway) { self.gateway = gateway }
    func pay(amount: Int) async throws -> Receipt {
        Receipt(isDeclined: (gateway as? FakeGateway)?.declines ?? false)
    }
}

/// The app whose container the test snippets use.
enum App {
    static let container: Container = {
        let container = Container()
        container.autowire(Checkout.self) { (gateway: any PaymentGateway) in Checkout(gateway: gateway) }
        return container
    }()
}

final class User: Sendable {}
final class Feed: Sendable { init(db: Database, user: User) {} }
final class Avatar: Sendable {
    static func download(_ url: URL) async throws -> Avatar { Avatar() }
}
struct Router {
    func respond() async throws -> String { "" }
}

@MainActor final class SettingsModel {
    init() {}
}
@MainActor final class CartStore {
    init() {}
}
@MainActor final class CartModel {
    init(store: CartStore) {}
}

final class Person: Sendable {
    init(_ first: String, _ last: String) {}
}
final class Greeting: Sendable { init(_ name: String) {} }
final class Endpoint: Sendable { init(_ host: String, _ port: Int) {} }
final class Tenant: Sendable { init(_ id: Int) {} }

final class Mailer: DefinedService, Sendable {
    init(_ settings: SMTPSettings) {}
    init(arguments: DefinitionArguments) throws {}
    func configured() -> Mailer { self }
}
struct OrderNotifier: Sendable {
    let mailer: Mailer
}
final class SimpleLogger: Sendable { init(debug: Bool) {} }

final class Service1: DefinedService, Sendable {
    init(arguments: DefinitionArguments) throws {}
}
final class Service2: DefinedService, Sendable {
    init(arguments: DefinitionArguments) throws {}
}
struct SimpleLoggerProvider: DefinitionProvider {
    func register(in definitions: Definitions) {}
}

final class OrderLedger: Sendable { init(session: Session) async {} }
