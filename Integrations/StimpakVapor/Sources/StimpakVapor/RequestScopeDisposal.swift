import Logging
import Stimpak
internal import StimpakServer
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
    let record: RequestScopeRecord?

    init(slot: RequestScopeSlot, logger: Logger, record: RequestScopeRecord?) {
        self.slot = slot
        self.logger = logger
        self.record = record
    }

    /// The response is released: its body can no longer be written, so its scope is disposed, in a task of
    /// its own (a deinit cannot await).
    deinit {
        guard let scope = slot.close() else { return }
        let (logger, record) = (self.logger, self.record)
        Task { await RequestScopes.dispose(scope, logger: logger, record: record) }
    }
}
