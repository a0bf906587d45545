public import Stimpak

/// What a testing helper's `requireNoLeaks()` found: request scopes left open, and instances alive after
/// their request scope was disposed.
public struct LeakReport: Error, CustomStringConvertible {
    /// The request scopes left open, by key.
    public let openScopes: [String]
    /// The instances alive after their request scope was disposed.
    public let survivors: [String]

    /// A report of `openScopes` and `survivors`.
    /// - Parameters:
    ///   - openScopes: The request scopes left open, by key.
    ///   - survivors: The instances alive after their request scope was disposed.
    public init(openScopes: [String], survivors: [String]) {
        self.openScopes = openScopes
        self.survivors = survivors
    }

    /// The open scopes and the survivors, a line each.
    public var description: String {
        var lines: [String] = []
        if !openScopes.isEmpty { lines.append("\(openScopes.count) request scopes left open: \(openScopes)") }
        if !survivors.isEmpty { lines.append("\(survivors.count) instances outlived their request scope: \(survivors)") }
        return lines.joined(separator: "\n")
    }
}

extension LeakReport {
    /// Waits up to `timeout` for the request scopes open below `parent` to be disposed, for the disposals under
    /// way to end and for the instances of the scopes disposed to be released, then throws what is left: the
    /// check behind the testing helpers' `requireNoLeaks(timeout:)`.
    ///
    /// All three can lag a response on the wire: a streamed body's scope is disposed once the framework is done
    /// with the body, and a session that the body's closure captured is released when the framework releases
    /// the response, which can be after the scope's disposal. A leak is what is still there at the deadline, or
    /// when the calling task is cancelled.
    /// - Parameters:
    ///   - parent: The test's scope, whose children are the request scopes.
    ///   - record: The request scopes whose disposal began, and those whose disposal ended.
    ///   - timeout: How long to wait.
    /// - Throws: ``LeakReport`` naming the scopes still open and the instances still alive.
    public static func check(
        openBelow parent: Scope, record: RequestScopeRecord, timeout: Duration
    ) async throws(LeakReport) {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            // In this order: a scope leaves `parent` after its disposal began, and joins `disposed` after it
            // leaves `disposing`, so each scope is in one of the three when read.
            let open = parent.openScopes.map(\.name) + record.disposing.map { "\($0.name) (being disposed)" }
            let survivors = record.disposed.flatMap(\.survivors).map(\.description)
            if open.isEmpty && survivors.isEmpty { return }
            // A cancelled test stops waiting (its sleep would return at once): what is there now is reported.
            guard clock.now < deadline, !Task.isCancelled else { throw LeakReport(openScopes: open, survivors: survivors) }
            try? await Task.sleep(for: .milliseconds(2))
        }
    }
}

extension Scope {
    /// The scope's key in a report, or "?" for an anonymous scope.
    fileprivate var name: String { key.map { "\($0)" } ?? "?" }
}
