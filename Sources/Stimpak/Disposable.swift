/// A service that releases resources when the cache holding it is disposed.
///
/// Stimpak calls ``dispose()`` once, when the scope (or, for a singleton, the container) that holds the
/// instance is disposed, in reverse order of creation. A throwing `dispose()` does not stop the others:
/// the error is reported in the array that ``Scope/dispose()`` returns.
public protocol Disposable: AnyObject {
    /// Releases the instance's resources.
    func dispose() throws
}
