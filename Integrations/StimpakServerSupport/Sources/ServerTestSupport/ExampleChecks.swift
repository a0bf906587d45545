import ServerExampleServices
public import Stimpak
public import Testing

/// Sends `count` requests at once to the example app, alternately to `orders` and `users/<n>`, through `get`,
/// which sends a GET to the path it is given (without its leading slash) and returns the response's body.
/// - Parameters:
///   - count: How many requests.
///   - get: Sends one request.
/// - Returns: The bodies, in the order the responses came.
public func sendExampleRequests(
    _ count: Int, _ get: @escaping @Sendable (_ path: String) async throws -> String
) async throws -> [String] {
    try await withThrowingTaskGroup(of: String.self) { group in
        for request in 0..<count {
            group.addTask { try await get(request.isMultiple(of: 2) ? "orders" : "users/\(request)") }
        }
        return try await group.reduce(into: []) { $0.append($1) }
    }
}

/// Checks the example app after ``sendExampleRequests(_:_:)``: each request had a session of its own, `orders`
/// resolved one session twice, every session was closed exactly once, and no request scope is left open.
/// - Parameters:
///   - bodies: The responses' bodies, one per request.
///   - container: The app's container.
///   - testScope: The scope below which the test's requests opened theirs: the container's only open scope.
///   - sourceLocation: Where a failed expectation is reported.
/// - Throws: A resolution error when the container has no pool.
public func expectOneSessionPerRequest(
    _ bodies: [String], container: Container, testScope: Scope,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let sessions = Set(bodies.compactMap { $0.firstMatch(of: /on session (\d+)/).flatMap { Int($0.1) } })
    #expect(sessions.count == bodies.count, "a session of its own for each request", sourceLocation: sourceLocation)
    #expect(
        bodies.filter { $0.contains("orders") }.allSatisfy { $0.contains("one session: true") },
        sourceLocation: sourceLocation)
    let pool = try await testScope.require(ConnectionPool.self)
    #expect(pool.sessionsOpened == bodies.count, sourceLocation: sourceLocation)
    #expect(
        pool.sessionsClosed == bodies.count, "closed exactly once each: a second close throws and is logged",
        sourceLocation: sourceLocation)
    #expect(testScope.openScopeCount == 0, "no request scope left open", sourceLocation: sourceLocation)
    #expect(container.openScopeCount == 1, "only the test's own scope", sourceLocation: sourceLocation)
}
