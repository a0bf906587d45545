import Logging
import Stimpak
import Vapor

/// The disposal of a request scope whose response body is written after the handler returned: run when
/// Vapor releases the response, which it does once the body's last byte is written or its write has failed
/// (the client went away), and when a middleware drops the response unwritten.
final class RequestScopeDisposal: Sendable {
    struct Key: StorageKey {
        typealias Value = RequestScopeDisposal
    }

    let slot: RequestScopeSlot
    let logger: Logger
    let afterDisposal: (@Sendable (Scope) -> Void)?

    init(slot: RequestScopeSlot, logger: Logger, afterDisposal: (@Sendable (Scope) -> Void)?) {
        self.slot = slot
        self.logger = logger
        self.afterDisposal = afterDisposal
    }

    /// The response is released: its body can no longer be written, so its scope is disposed, in a task of
    /// its own (a deinit cannot await).
    deinit {
        guard let scope = slot.close() else { return }
        let (logger, afterDisposal) = (self.logger, self.afterDisposal)
        Task { await Self.dispose(scope, logger: logger, then: afterDisposal) }
    }

    /// Disposes `scope`, awaiting its asynchronous hooks (in a task of its own when this one is cancelled,
    /// so that a hook that closes a connection is not cancelled with the request), logs each failure at
    /// error level through the request's logger (so with the request id), then calls `afterDisposal`.
    static func dispose(_ scope: Scope, logger: Logger, then afterDisposal: (@Sendable (Scope) -> Void)?) async {
        let failures: [DisposalFailure]
        if Task.isCancelled {
            failures = await Task { await scope.dispose() }.value
        } else {
            failures = await scope.dispose()
        }
        for failure in failures {
            logger.error(
                "Disposing \(failure.service) at the end of the request threw",
                metadata: ["stimpak.error": "\(failure.error)"])
        }
        afterDisposal?(scope)
    }
}
