import Logging
import Stimpak
import StimpakServer
import Synchronization

/// The disposal of a request scope whose response body is written after the handler returned: run once,
/// by whichever comes first of the body's end (written or failed) and the release of the response unwritten.
final class RequestScopeDisposal: Sendable {
    let scope: Scope
    let logger: Logger
    let record: RequestScopeRecord?
    /// Set by the one that disposes: the body's writer, or `deinit`.
    private let isClaimed = Atomic<Bool>(false)

    init(scope: Scope, logger: Logger, record: RequestScopeRecord?) {
        self.scope = scope
        self.logger = logger
        self.record = record
    }

    /// Disposes the scope, unless it is already.
    func run() async {
        guard claim() else { return }
        await RequestScopes.dispose(scope, logger: logger, record: record)
    }

    /// A response dropped unwritten (the client went away before its head was written, or a middleware
    /// replaced it) never calls its body: its scope is disposed from here, in a task of its own.
    deinit {
        guard claim() else { return }
        let (scope, logger, record) = (self.scope, self.logger, self.record)
        Task { await RequestScopes.dispose(scope, logger: logger, record: record) }
    }

    private func claim() -> Bool {
        !isClaimed.exchange(true, ordering: .acquiringAndReleasing)
    }
}
