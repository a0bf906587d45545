/// Whether opening a child scope with a key returns an open child with an equal key, or a new scope of the
/// caller's own (``Resolving/openScope(_:sharing:)-(AnyHashable,ScopeSharing)``).
///
/// ```swift
/// let session = container.openScope(userID)                                  // shared by the user's requests
/// let request = session.openScope(requestID, sharing: .never)                // this request's alone
/// ```
public struct ScopeSharing: Hashable, Sendable, CustomStringConvertible {
    enum Kind: Hashable, Sendable {
        case byKey
        case never
    }

    let kind: Kind

    /// Returns the open child with an equal key that was opened `.byKey`, or opens one that later calls find:
    /// the scope of a user's session, shared by that user's requests. What ``Resolving/openScope(_:)-(AnyHashable)``
    /// does.
    public static let byKey = ScopeSharing(kind: .byKey)

    /// Opens a new child every time, even when an open child has an equal key, and no lookup by key returns it
    /// (`scope[key]`, `openScope(key)`, `disposeScope(key)`): a request's scope keyed by a client-supplied id,
    /// which two requests may send alike. Its key still names it (``Scope/key``, reports, errors) and still
    /// matches `.scopedTo(key)`.
    public static let never = ScopeSharing(kind: .never)

    public var description: String {
        switch kind {
        case .byKey: return ".byKey"
        case .never: return ".never"
        }
    }
}
