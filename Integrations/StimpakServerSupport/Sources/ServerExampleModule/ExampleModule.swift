public import ServerExampleServices
public import Stimpak

/// A session is closed by its request scope's disposal, awaited.
extension DatabaseSession: AsyncDisposable {
    public func dispose() async throws {
        try await close()
    }
}

/// The example app's registrations: a singleton pool, an async `.inScope` session that is `AsyncDisposable`, and a
/// request-scoped ``RequestInfo`` made from the values the integration provides into each request's scope.
public struct ExampleModule<Request: Sendable, RequestID: CustomStringConvertible & Sendable>: Module {
    private let path: @Sendable (Request) -> String

    /// The registrations for a framework whose request scopes hold a `Request` and a `RequestID`.
    /// - Parameters:
    ///   - request: The framework's request type, provided into each request's scope.
    ///   - id: The integration's request id type, provided into each request's scope.
    ///   - path: The request's path.
    public init(request: Request.Type, id: RequestID.Type, path: @escaping @Sendable (Request) -> String) {
        self.path = path
    }

    public func register(in container: Container) {
        container.register(ConnectionPool.self, reuse: .eagerSingleton) { ConnectionPool() }
        container.register(DatabaseSession.self, reuse: .inScope) { (scope: Scope) async throws in
            await DatabaseSession.open(pool: try scope.require(ConnectionPool.self))
        }
        let path = self.path
        container.autowire(RequestInfo.self, reuse: .inScope) { (request: Request, id: RequestID) in
            RequestInfo(id: id.description, path: path(request))
        }
    }
}

/// A fake of the example's pool, for a test scope to install for one test.
public struct FakePool: ScopeModule {
    /// The pool that the test's requests use.
    public let pool: ConnectionPool

    /// A module that registers `pool`.
    /// - Parameter pool: The fake.
    public init(pool: ConnectionPool) { self.pool = pool }

    public func register(in scope: Scope) {
        let pool = self.pool
        scope.register(ConnectionPool.self, reuse: .singleton) { pool }
    }
}
