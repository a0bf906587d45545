/// A service that releases resources when the cache holding it is disposed.
///
/// Stimpak calls `dispose()` once, when the scope (or, for a singleton, the container) that holds the
/// instance is disposed, in reverse order of creation. A throwing `dispose()` does not stop the others:
/// the error is reported in the array that `Scope/dispose()` returns.
public protocol Disposable: AnyObject {
    /// Releases the instance's resources.
    func dispose() throws
}

/// A service that releases resources asynchronously (closes a connection, flushes a file) when the cache
/// holding it is disposed.
///
/// `await scope.dispose()` awaits `dispose()` in the same order as synchronous hooks (reverse order of
/// creation) and reports a throwing one. A synchronous `scope.dispose()` cannot await: from the first
/// asynchronous hook on, the hooks run in a task of their own, in that order, and the scope above waits for it.
public protocol AsyncDisposable: AnyObject {
    /// Releases the instance's resources.
    func dispose() async throws
}
