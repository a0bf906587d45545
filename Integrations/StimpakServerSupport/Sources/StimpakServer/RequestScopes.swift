public import Logging
public import Stimpak

/// What the server integrations do with a request's scope whatever the framework.
public enum RequestScopes {
    /// Disposes a request's scope, awaiting its asynchronous hooks (in a task of its own when this one is
    /// cancelled, so that a hook that closes a connection is not cancelled with the request), and logs each
    /// failure at error level through the request's logger (so with the request id).
    /// - Parameters:
    ///   - scope: The request's scope.
    ///   - logger: The request's logger.
    ///   - record: Where a testing helper follows the disposal, from its start to its end.
    public static func dispose(_ scope: Scope, logger: Logger, record: RequestScopeRecord? = nil) async {
        record?.disposalBegan(scope)
        defer { record?.disposalEnded(scope) }
        let failures = await uncancelled { await scope.dispose() }
        for failure in failures {
            logger.error(
                "Disposing \(failure.service) at the end of the request threw",
                metadata: ["stimpak.error": "\(failure.error)"])
        }
    }

    /// Runs `dispose` (a scope's or a container's), in a task of its own when this one is cancelled, so that an
    /// asynchronous hook (a connection's close) is not cancelled with it.
    /// - Parameter dispose: The disposal.
    /// - Returns: Its failures.
    public static func uncancelled(
        _ dispose: @escaping @Sendable () async -> [DisposalFailure]
    ) async -> [DisposalFailure] {
        Task.isCancelled ? await Task { await dispose() }.value : await dispose()
    }
}
