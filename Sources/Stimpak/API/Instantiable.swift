/// A service that Stimpak can create with `init()`, so it registers without a factory.
///
/// ```swift
/// final class Clock: Instantiable { init() {} }
/// container += (Clock.self, Reuse.singleton)
/// ```
public protocol Instantiable {
    /// Creates the service.
    init()
}
