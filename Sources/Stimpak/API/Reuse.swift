/// How long a resolved instance lives and who shares it.
///
/// A reuse picks the scope whose cache holds the instance; `.transient` picks none.
/// New lifetimes are added as new static members, so code that switches over nothing keeps compiling.
public struct Reuse: Hashable, @unchecked Sendable, CustomStringConvertible {
    // Unchecked only because `AnyHashable` (a `.scopedTo` key) is not `Sendable`: scope keys are documented to
    // be immutable values, and Stimpak only compares and describes them.

    enum Kind: Hashable, Sendable {
        case transient
        case singleton
        case inScope
        case scopedTo
        case graph
        case weak
    }

    /// Which scope a `.scopedTo` reuse caches in.
    enum ScopeMatch: Hashable {
        /// The nearest scope opened with this key.
        case key(ScopeKey)
        /// The nearest scope whose key's type is this one (`ObjectIdentifier` of it), named for messages.
        case keyType(ObjectIdentifier, name: String)
    }

    let kind: Kind
    let match: ScopeMatch?

    /// Whether one instance serves the whole container (a singleton, eager or not, or a weak one): such a
    /// service must not capture a scoped one.
    var isContainerWide: Bool { kind == .singleton || kind == .weak }
    /// A singleton that `Container/makeEagerSingletons()` makes up front.
    let isEager: Bool

    init(kind: Kind, match: ScopeMatch? = nil, isEager: Bool = false) {
        self.kind = kind
        self.match = match
        self.isEager = isEager
    }

    /// A new instance on every resolve, never stored.
    public static let transient = Reuse(kind: .transient)

    /// One instance for the whole container, held by the root scope and shared by every scope;
    /// released when the container is disposed.
    ///
    /// Its factory receives the root scope, so its dependencies never come from a shorter-lived scope.
    public static let singleton = Reuse(kind: .singleton)

    /// One instance for the whole container while anyone else holds it; made again after the last holder
    /// lets it go (DICE's `weak`, Swinject's `.weak`).
    ///
    /// The container keeps only a weak reference, so it never disposes the instance. Class instances
    /// only: a factory that makes a value (struct, enum) fails with ``ResolutionError/Code/weakValueType``.
    /// While an instance is alive, threads that resolve it at once share it, and it is made once.
    public static let weak = Reuse(kind: .weak)

    /// One instance per outermost resolve: every dependency resolved while it runs shares the instance,
    /// and the next outermost resolve makes a new one (DICE's `objectGraph`, Swinject's `.graph`).
    ///
    /// ```swift
    /// container.register(UnitOfWork.self, reuse: .graph) { UnitOfWork() }
    /// container.register(OrderService.self) { scope in OrderService(try scope.require(UnitOfWork.self), try scope.require(Repository.self)) }
    /// container.register(Repository.self) { scope in Repository(try scope.require(UnitOfWork.self)) }   // the same UnitOfWork
    /// ```
    /// The graph belongs to the thread that resolves: a factory that resolves on another thread starts
    /// another graph there. Nothing caches or disposes the instance after the resolve, like a transient.
    public static let graph = Reuse(kind: .graph)

    /// A ``singleton`` that `Container/makeEagerSingletons()` makes up front, in registration order.
    ///
    /// ```swift
    /// container.register(Database.self, reuse: .eagerSingleton) { try Database.connect() }
    /// try container.makeEagerSingletons()   // at start-up: every failure at once
    /// ```
    /// Until then (or if that call is never made) it is made on first resolve, like a singleton.
    public static let eagerSingleton = Reuse(kind: .singleton, isEager: true)

    /// One instance per scope that resolves it; released when that scope is disposed.
    ///
    /// Resolving from the container itself uses the root scope's cache.
    public static let inScope = Reuse(kind: .inScope)

    /// One instance in the nearest scope opened with `key`, the resolving scope or one of its ancestors;
    /// released when that scope is disposed.
    ///
    /// Every scope below it shares the instance, and its factory receives that scope. With no such scope
    /// between the resolving scope and the root, resolving fails with
    /// ``ResolutionError/Code/noMatchingScope``.
    ///
    /// ```swift
    /// container.register(Cart.self, reuse: .scopedTo("checkout")) { Cart() }
    /// let checkout = container.openScope("checkout")
    /// let step = checkout.openScope(2)
    /// try step.require(Cart.self) === checkout.require(Cart.self)   // true
    /// ```
    /// - Parameter key: The key the scope was opened with.
    public static func scopedTo(_ key: AnyHashable) -> Reuse {
        Reuse(kind: .scopedTo, match: .key(ScopeKey(erased: key)))
    }

    /// One instance in the nearest scope whose key is of type `Key` (whatever its value), the resolving scope
    /// or one of its ancestors; released when that scope is disposed.
    ///
    /// ```swift
    /// struct SessionID: Hashable { let value: UUID }
    /// container.register(User.self, reuse: .scopedTo(SessionID.self)) { (scope: Scope) in User(try scope.require(Token.self)) }
    /// let session = container.openScope(SessionID(value: id))
    /// let request = session.openScope(requestNumber)
    /// try request.require(User.self)   // the session's User
    /// ```
    /// - Parameter keyType: The type of the key the scope was opened with.
    public static func scopedTo<Key: Hashable>(_ keyType: Key.Type) -> Reuse {
        Reuse(kind: .scopedTo, match: .keyType(ObjectIdentifier(Key.self), name: String(describing: Key.self)))
    }

    public var description: String {
        switch kind {
        case .transient: return ".transient"
        case .singleton: return isEager ? ".eagerSingleton" : ".singleton"
        case .inScope: return ".inScope"
        case .graph: return ".graph"
        case .weak: return ".weak"
        case .scopedTo:
            switch match {
            case .key(let key)?: return ".scopedTo(\(String(reflecting: key.erased.base)))"
            case .keyType(_, let name)?: return ".scopedTo(\(name).self)"
            case nil: return ".scopedTo"
            }
        }
    }

    /// For `.scopedTo`: the nearest of `resolving` and its ancestors (up to `last` when given: the scope of a
    /// scope's registration) that `match` names, or nil. Keys and
    /// parents never change, so this needs no lock; it compares scope keys, which may run user code, so
    /// call it without the container's lock.
    func nearestScope(from resolving: Scope, upTo last: Scope? = nil) -> Scope? {
        var candidate: Scope? = resolving
        while let scope = candidate {
            if let key = scope.scopeKey {
                switch match {
                case .key(let wanted)?:
                    if key == wanted { return scope }
                case .keyType(let type, _)?:
                    if key.baseType == type { return scope }
                case nil:
                    break
                }
            }
            candidate = scope === last ? nil : scope.parent
        }
        return nil
    }

    /// What a `.scopedTo` reuse looks for, for messages: `the scope opened with "checkout"`.
    var wantedScopeDescription: String {
        switch match {
        case .key(let key)?: return "a scope opened with the key \(String(reflecting: key.erased.base))"
        case .keyType(_, let name)?: return "a scope opened with a key of type \(name)"
        case nil: return "a matching scope"
        }
    }
}
