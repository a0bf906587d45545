import Logging
import Stimpak
import StimpakServer
import Synchronization

/// The disposal of a request scope whose response body is written after the handler returned: run once,
/// by whichever comes first of the body's end (written or failed) and the release of the response unwritten.
final class RequestScopeDisposal: Sendable {
    let scope: Scope
    let logger: Logger
    let afterDisposal: (@Sendable (Scope) -> Void)?
    /// Set by the one that disposes: the body's writer, or `deinit`.
    private let isClaimed = Atomic<Bool>(false)

    init(scope: Scope, logger: Logger, afterDisposal: (@Sendable (Scope) -> Void)?) {
        self.scope = scope
        self.logger = logger
        self.afterDisposal = afterDisposal
    }

    /// Disposes the scope, unless it is already.
    func run() async {
        guard claim() else { return }
        await Self.dispose(scope, logger: logger, then: afterDisposal)
    }

    /// A response dropped unwritten (the client went away before its head was written, or a middleware
    /// replaced it) never calls its body: its scope is disposed from here, in a task of its own.
    deinit {
        guard claim() else { return }
        let (scope, logger, afterDisposal) = (self.scope, self.logger, self.afterDisposal)
        Task { await Self.dispose(scope, logger: logger, then: afterDisposal) }
    }

    private func claim() -> Bool {
        !isClaimed.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// Disposes `scope` with ``RequestScopes/dispose(_:logger:)`` (its asynchronous hooks awaited, even when
    /// the request's task is cancelled; each failure logged at error level with the request id), then calls
    /// `afterDisposal`.
    static func dispose(_ scope: Scope, logger: Logger, then afterDisposal: (@Sendable (Scope) -> Void)?) async {
        await RequestScopes.dispose(scope, logger: logger)
        afterDisposal?(scope)
    }
}
