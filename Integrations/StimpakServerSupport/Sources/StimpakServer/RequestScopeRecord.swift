public import Stimpak
import Synchronization

/// The request scopes whose disposal has begun, and those whose disposal has ended: what a testing helper
/// counts and checks.
///
/// A middleware calls ``disposalBegan(_:)`` before it disposes a request scope and ``disposalEnded(_:)`` once
/// the disposal has returned, so a scope is always somewhere a check can see it: open below its parent, being
/// disposed, or disposed.
public final class RequestScopeRecord: Sendable {
    private struct State {
        var disposing: [ObjectIdentifier: Scope] = [:]
        var disposed: [Scope] = []
    }

    private let state = Mutex(State())

    /// An empty record.
    public init() {}

    /// `scope`'s disposal begins.
    /// - Parameter scope: A request scope.
    public func disposalBegan(_ scope: Scope) {
        state.withLock { $0.disposing[ObjectIdentifier(scope)] = scope }
    }

    /// `scope`'s disposal has returned: its hooks have run.
    /// - Parameter scope: A request scope whose disposal began.
    public func disposalEnded(_ scope: Scope) {
        state.withLock {
            $0.disposing[ObjectIdentifier(scope)] = nil
            $0.disposed.append(scope)
        }
    }

    /// The request scopes being disposed.
    public var disposing: [Scope] { state.withLock { Array($0.disposing.values) } }

    /// The request scopes disposed, in the order their disposals ended.
    public var disposed: [Scope] { state.withLock { $0.disposed } }

    /// How many request scopes have been disposed.
    public var disposedCount: Int { state.withLock { $0.disposed.count } }
}
