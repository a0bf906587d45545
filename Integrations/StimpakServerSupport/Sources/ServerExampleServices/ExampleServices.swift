import Synchronization

/// The database's connection pool: one for the app. It counts the sessions opened and closed, so the load
/// script can check that every session was closed once.
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

/// A database session: one per request, opened by an `async` function and closed, awaited, when the request
/// is done.
public final class DatabaseSession: Sendable {
    /// The session's number in its pool, from 1.
    public let number: Int
    let pool: ConnectionPool
    private let closed = Atomic<Bool>(false)

    private init(pool: ConnectionPool) {
        self.pool = pool
        number = pool.checkOut()
    }

    /// Opens a session from `pool`.
    /// - Parameter pool: The pool.
    /// - Returns: The session.
    public static func open(pool: ConnectionPool) async -> DatabaseSession {
        DatabaseSession(pool: pool)
    }

    /// Runs `query`; a closed session refuses.
    /// - Parameter query: The query.
    /// - Returns: What it found.
    /// - Throws: ``SessionClosed``.
    public func query(_ query: String) throws -> String {
        guard !isClosed else { throw SessionClosed() }
        return "\(query) on session \(number)"
    }

    /// Whether the session has been closed.
    public var isClosed: Bool { closed.load(ordering: .relaxed) }

    /// Closes the session and returns it to its pool.
    /// - Throws: ``SessionClosed`` when it is closed already.
    public func close() async throws {
        guard !closed.exchange(true, ordering: .relaxed) else { throw SessionClosed() }
        pool.checkIn()
    }
}

/// A session used after it was closed.
public struct SessionClosed: Error, CustomStringConvertible {
    /// The error.
    public init() {}

    public var description: String { "the session is closed" }
}

/// The request as the handlers see it: its id and its path.
public struct RequestInfo: Sendable {
    /// The request's id, as the framework writes it.
    public let id: String
    /// The request's path.
    public let path: String

    /// The request with `id` and `path`.
    /// - Parameters:
    ///   - id: The request's id.
    ///   - path: The request's path.
    public init(id: String, path: String) {
        self.id = id
        self.path = path
    }
}
