// A simulated server: a few hundred requests handled at once, each in its own Stimpak scope.
//
//   swift run stimpak-server-example
//   swift run stimpak-server-example --graph dot       # its dependency graph as Graphviz DOT (or: mermaid)
//
// Each request scope holds the request itself (put there with `provide`), an `.inScope` database
// session and a logger tagged with the request id; the connection pool and the configuration are
// singletons shared by every request. Disposing the request's scope closes its session and logger.
// Requests run inside their user's session scope (opened with a `UserSession` key), where a shopping
// cart lives: `.scopedTo(UserSession.self)`, one per user, shared by all of that user's requests.
// Each request binds its scope as the current scope (`withCurrent`), and its controller injects what it
// needs with property wrappers. Half the users are in an A/B test: their session scopes register their
// own `PricingPolicy`, which shadows the container's for their requests only.
import Foundation
import Stimpak

// MARK: - Services

struct Request: Sendable {
    let id: Int
    let user: Int
    let path: String
}

/// The key of a user's session scope.
struct UserSession: Hashable, Sendable {
    let user: Int
}

/// One per user session: `.scopedTo(UserSession.self)`.
final class ShoppingCart: Sendable {
    let serial: Int
    init(events: EventLog) { serial = events.nextSerial() }
}

final class Configuration: Sendable {
    let databaseURL = "postgres://localhost/shop"
}

/// Shared by every request: a singleton.
final class ConnectionPool: Sendable {
    let configuration: Configuration
    init(configuration: Configuration) { self.configuration = configuration }
}

/// One per request: `.inScope`, closed when the request's scope is disposed.
final class DatabaseSession: Disposable, Sendable {
    let pool: ConnectionPool
    let requestID: Int
    let events: EventLog
    let serial: Int
    init(pool: ConnectionPool, requestID: Int, events: EventLog) {
        (self.pool, self.requestID, self.events) = (pool, requestID, events)
        self.serial = events.nextSerial()
        events.record(requestID, "DatabaseSession #\(serial) opened")
    }
    func dispose() { events.record(requestID, "DatabaseSession closed") }
}

/// One per request, tagged with its id.
final class Logger: Disposable, Sendable {
    let requestID: Int
    let events: EventLog
    init(requestID: Int, events: EventLog) {
        (self.requestID, self.events) = (requestID, events)
        events.record(requestID, "Logger[request \(requestID)] created")
    }
    func log(_ message: String) { events.record(requestID, "log: \(message)") }
    func dispose() { events.record(requestID, "Logger flushed") }
}

/// Transient: a new handler for every request. It is `Disposable`, so its registration has the request's
/// scope track it (`trackDisposableTransients()`); a disposable transient nobody disposes is refused.
final class OrderHandler: Disposable, Sendable {
    let session: DatabaseSession
    let logger: Logger
    let cart: ShoppingCart
    init(session: DatabaseSession, logger: Logger, cart: ShoppingCart) {
        (self.session, self.logger, self.cart) = (session, logger, cart)
    }
    func handle(_ request: Request) -> String {
        logger.log("GET \(request.path)")
        return "order \(request.id)"
    }
    func dispose() { logger.log("OrderHandler done") }
}

/// How prices are shown: the container's default, overridden in the session scopes of an A/B test group.
protocol PricingPolicy: Sendable {
    var name: String { get }
}

struct StandardPricing: PricingPolicy {
    let name = "standard"
}

struct ExperimentalPricing: PricingPolicy {
    let name = "experimental"
}

/// Made by the request's code, not registered: its properties resolve from the current scope, the request's.
final class RequestController {
    @Injected var request: Request  // the request's own value, put there with `provide`
    @Injected var handler: OrderHandler
    @Injected var pricing: any PricingPolicy
    @OptionalInjected var discounts: Discounts?  // not registered: nil
    @LazyInjected var logger: Logger  // the request's logger, resolved when first used

    func respond() async throws -> String {
        try await Task.sleep(nanoseconds: 100_000)  // the binding follows the code across awaits
        logger.log("pricing: \(pricing.name), discounts: \(discounts == nil ? "none" : "some")")
        return handler.handle(request)
    }
}

final class Discounts {}

/// Records what happens to one request (the one being traced), from any thread.
final class EventLog: @unchecked Sendable {  // `events` is guarded by `lock`
    private let lock = NSLock()
    private var events: [String] = []
    private var serials = 0
    let tracedRequest: Int

    func nextSerial() -> Int {
        lock.lock()
        defer { lock.unlock() }
        serials += 1
        return serials
    }

    init(tracedRequest: Int) { self.tracedRequest = tracedRequest }

    func record(_ requestID: Int, _ event: String) {
        guard requestID == tracedRequest else { return }
        lock.lock()
        events.append(event)
        lock.unlock()
    }

    var recorded: [String] {
        lock.lock()
        defer { lock.unlock() }
        return events
    }
}

// MARK: - Registrations

let requestCount = 300
let userCount = 10
let events = EventLog(tracedRequest: 7)
let container = Container()

// Each factory declares what it resolves (`dependsOn`), so that validation checks it and the graph draws it
// without making anything.
container.registerProvided(Request.self)  // each request scope provides its request
container.register(Configuration.self, reuse: .singleton) { Configuration() }
    .dependsOn()
container.register(ConnectionPool.self, reuse: .singleton) { scope in
    ConnectionPool(configuration: try scope.require(Configuration.self))
}
.dependsOn(Configuration.self)
container.register(DatabaseSession.self, reuse: .inScope) { scope in
    DatabaseSession(
        pool: try scope.require(ConnectionPool.self), requestID: try scope.require(Request.self).id, events: events)
}
.dependsOn(ConnectionPool.self, Request.self)
container.register(Logger.self, reuse: .inScope) { scope in
    Logger(requestID: try scope.require(Request.self).id, events: events)
}
.dependsOn(Request.self)
container.register(ShoppingCart.self, reuse: .scopedTo(UserSession.self)) { ShoppingCart(events: events) }
    .dependsOn()
container.register((any PricingPolicy).self, reuse: .singleton) { StandardPricing() }
    .dependsOn()
container.register(OrderHandler.self) { scope in
    OrderHandler(
        session: try scope.require(DatabaseSession.self), logger: try scope.require(Logger.self),
        cart: try scope.require(ShoppingCart.self))
}
.dependsOn(DatabaseSession.self, Logger.self, ShoppingCart.self)
.trackDisposableTransients()

// `--graph dot` or `--graph mermaid`: print the dependency graph and stop (README, "Diagnostics").
if let option = CommandLine.arguments.firstIndex(of: "--graph") {
    let graph = container.dependencyGraph()
    let format = CommandLine.arguments.dropFirst(option + 1).first ?? "dot"
    print(format == "mermaid" ? graph.mermaid : graph.dot)
    exit(0)
}

// Every registration checked before the first request: a problem stops the server with all of them listed.
try container.requireValid()
container.tracksInstances = true

// MARK: - Serving

struct Outcome: Sendable {
    let user: Int
    let pricing: String
    let pool: ObjectIdentifier
    let session: Int
    let sessionIsReusedWithinRequest: Bool
    let cart: Int
    let response: String
}

let userSessions = (0..<userCount).map { user in
    let session = container.openScope(UserSession(user: user))
    // The A/B group: a registration of the session scope, seen by its requests and no one else's.
    if user.isMultiple(of: 2) {
        session.register((any PricingPolicy).self, reuse: .singleton) { ExperimentalPricing() }
    }
    return session
}

func serve(_ request: Request) async throws -> Outcome {
    // The request's scope, disposed (its async hooks awaited) however the body ends.
    try await userSessions[request.user].withScope("request-\(request.id)") { scope in
        scope.provide(request)
        // Every injection below resolves from the request's scope: its request, session, logger, cart.
        return try await scope.withCurrent {
            let controller = RequestController()
            let response = try await controller.respond()
            let again = try await scope.require(DatabaseSession.self)
            return Outcome(
                user: request.user,
                pricing: controller.pricing.name,
                pool: ObjectIdentifier(controller.handler.session.pool),
                session: controller.handler.session.serial,
                sessionIsReusedWithinRequest: again === controller.handler.session,
                cart: controller.handler.cart.serial,
                response: response)
        }
    }
}

let outcomes = try await withThrowingTaskGroup(of: Outcome.self) { group in
    for id in 1...requestCount {
        group.addTask { try await serve(Request(id: id, user: id % userCount, path: "/orders/\(id)")) }
    }
    var outcomes: [Outcome] = []
    for try await outcome in group { outcomes.append(outcome) }
    return outcomes
}

let pools = Set(outcomes.map(\.pool))
let sessions = Set(outcomes.map(\.session))
print("Shared:      \(pools.count) ConnectionPool for \(outcomes.count) requests (singleton)")
print(
    "Per request: \(sessions.count) DatabaseSessions, one per request scope (.inScope);"
        + " reused within its request: \(outcomes.allSatisfy(\.sessionIsReusedWithinRequest))")
print(
    "Per user:    \(Set(outcomes.map(\.cart)).count) ShoppingCarts for \(userCount) user sessions, shared by their"
        + " requests (.scopedTo(UserSession.self))")
let experimental = outcomes.filter { $0.pricing == "experimental" }
print(
    "A/B test:    \(experimental.count) requests priced \"experimental\" (the even users' session scopes register"
        + " their own PricingPolicy), all from even users: \(experimental.allSatisfy { $0.user.isMultiple(of: 2) });"
        + " \(outcomes.count - experimental.count) \"standard\"")
print("Request \(events.tracedRequest), in order (its scope disposes in reverse order of creation):")
for event in events.recorded { print("  - \(event)") }
let openRequests = userSessions.reduce(0) { $0 + $1.openScopeCount }
print("After load:  \(openRequests) request scopes left open; what is still cached:")
print(container.root.report().description.split(separator: "\n").prefix(4).map { "  \($0)" }.joined(separator: "\n"))
/// Disposes the container, awaiting its asynchronous hooks: in a function, since at the top level Swift picks the
/// synchronous `dispose()` (see its documentation).
func shutDown() async -> [DisposalFailure] { await container.dispose() }
let failures = await shutDown()
let survivors = userSessions.flatMap(\.survivors)
print(
    "Summary: \(outcomes.count) requests served concurrently, \(pools.count) shared pool,"
        + " \(sessions.count) sessions opened and closed, \(failures.count) disposal failures,"
        + " \(survivors.count) instances alive after disposal.")
