import Logging
import Stimpak
import StimpakServer
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

    /// Disposes `scope` with ``RequestScopes/dispose(_:logger:)`` (its asynchronous hooks awaited, even when
    /// the request's task is cancelled; each failure logged at error level with the request id), then calls
    /// `afterDisposal`.
    static func dispose(_ scope: Scope, logger: Logger, then afterDisposal: (@Sendable (Scope) -> Void)?) async {
        await RequestScopes.dispose(scope, logger: logger)
        afterDisposal?(scope)
    }
}
