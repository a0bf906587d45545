import Vapor
public import Stimpak
public import StimpakVapor
import Synchronization

/// The database's connection pool: one for the app (a singleton). It counts the sessions opened and closed,
/// so the load script can check that every session was closed once.
public final class ConnectionPool: Sendable {
    private let opened = Atomic<Int>(0)
    private let closed = Atomic<Int>(0)

    public init() {}

    /// How many sessions have been opened.
    public var sessionsOpened: Int { opened.load(ordering: .relaxed) }
    /// How many sessions have been closed.
    public var sessionsClosed: Int { closed.load(ordering: .relaxed) }

    func checkOut() -> Int { opened.add(1, ordering: .relaxed).newValue }
    func checkIn() { closed.add(1, ordering: .relaxed) }
}

/// A database session: one per request (`.inScope`), opened by an `async` factory and closed, awaited, when
/// the request's scope is disposed.
public final class DatabaseSession: AsyncDisposable, Sendable {
    public let number: Int
    let pool: ConnectionPool
    private let isClosed = Atomic<Bool>(false)

    private init(pool: ConnectionPool) {
        self.pool = pool
        number = pool.checkOut()
    }

    /// Opens a session from `pool`.
    public static func open(pool: ConnectionPool) async -> DatabaseSession {
        DatabaseSession(pool: pool)
    }

    /// Runs `query`; a closed session refuses.
    public func query(_ query: String) throws -> String {
        guard !isClosed.load(ordering: .relaxed) else { throw SessionClosed() }
        return "\(query) on session \(number)"
    }

    public var closed: Bool { isClosed.load(ordering: .relaxed) }

    public func dispose() async throws {
        guard !isClosed.exchange(true, ordering: .relaxed) else { throw SessionClosed() }
        pool.checkIn()
    }
}

/// A session used after it was closed.
public struct SessionClosed: Error, CustomStringConvertible {
    public init() {}

    public var description: String { "the session is closed" }
}

/// The request as the handlers see it: a request-scoped value made from the provided request and its id.
public struct RequestInfo: Sendable {
    public let id: RequestIdentifier
    public let path: String
}

/// The app's registrations.
public struct ExampleModule: Module {
    public init() {}

    public func register(in container: Container) {
        container.register(ConnectionPool.self, reuse: .eagerSingleton) { ConnectionPool() }
        container.register(DatabaseSession.self, reuse: .inScope) { (scope: Scope) async throws in
            await DatabaseSession.open(pool: try scope.require(ConnectionPool.self))
        }
        container.autowire(RequestInfo.self, reuse: .inScope) { (request: Request, id: RequestIdentifier) in
            RequestInfo(id: id, path: request.url.path)
        }
    }
}
