/// How long a resolved instance lives and who shares it.
///
/// A reuse picks the scope whose cache holds the instance; `.transient` picks none.
/// New lifetimes (for example reuse in the nearest scope opened with a given key) are added as new
/// static members, so code that switches over nothing keeps compiling.
public struct Reuse: Hashable, Sendable, CustomStringConvertible {
    enum Kind: Hashable, Sendable {
        case transient
        case singleton
        case inScope
    }

    let kind: Kind

    /// A new instance on every resolve, never stored.
    public static let transient = Reuse(kind: .transient)

    /// One instance for the whole container, held by the root scope and shared by every scope;
    /// released when the container is disposed.
    ///
    /// Its factory receives the root scope, so its dependencies never come from a shorter-lived scope.
    public static let singleton = Reuse(kind: .singleton)

    /// One instance per scope that resolves it; released when that scope is disposed.
    ///
    /// Resolving from the container itself uses the root scope's cache.
    public static let inScope = Reuse(kind: .inScope)

    public var description: String {
        switch kind {
        case .transient: return ".transient"
        case .singleton: return ".singleton"
        case .inScope: return ".inScope"
        }
    }

    /// The scope whose cache holds the instance when `resolving` resolves it, or nil when nothing is cached.
    @inline(__always)
    func cachingScope(for resolving: Scope) -> Scope? {
        switch kind {
        case .transient: return nil
        case .singleton: return resolving.root
        case .inScope: return resolving
        }
    }
}
