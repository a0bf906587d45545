/// A node of the container's scope tree, with its own instance cache: one per request, screen or session.
///
/// Open one with ``Resolving/openScope(_:)-(AnyHashable)`` on the container or on another scope. A scope resolves like
/// the container; `.inScope` services resolved from it live in it, and are disposed with it.
///
/// ```swift
/// let request = container.openScope(requestID)
/// request.provide(httpRequest)
/// let handler = try request.require(Handler.self)
/// request.dispose()
/// ```
public final class Scope: Resolving, @unchecked Sendable {
    // `scopeKey`, `sharesKey`, `keyHash`, `parentReference` (until `deinit`), `registry`, `registryTableWord` and
    // `sequence` never change; every other `var` is guarded by `registry.lock`, the one lock of the container,
    // except `words`, which are written under it and read atomically by the lock-free path, `lockWords` (the
    // scope's own lock's word), the state its disposal takes (marked "also guarded by `ownLock`"), and
    // `nextDetached`. The locks, not the runtime's exclusivity checks, keep the accesses apart:
    // `@exclusivity(unchecked)` saves a check per access on the locked path.

    // The stored properties are laid out in the order they are declared: the first cache line after the
    // object's header (whose reference count every child's opening and release writes) holds only what never
    // changes, so that a thread opening and disposing children does not take from the readers' caches the line
    // that every lock-free resolve in the scope reads (`words` and `registry`), whose own lock's word is on the
    // line after. `initializeWords(isDisposed:isRoot:)` checks the offsets.

    /// The key the scope was opened with; nil for the container's root scope.
    public var key: AnyHashable? { scopeKey?.erased }
    /// The key as the scope keeps it (an `Int` or `String` key without an `AnyHashable`); nil for the root.
    let scopeKey: ScopeKey?
    /// Whether a lookup by key finds it (opened ``ScopeSharing/byKey``, anonymously, or the root); false for a
    /// scope opened ``ScopeSharing/never``, found only by identity. Beside `scopeKey`, in its padding.
    let sharesKey: Bool
    /// Opening order among siblings, so that disposal can go in reverse.
    private let sequence: Int
    /// `key`'s hash, computed once: the parent finds and removes its children by it.
    let keyHash: Int
    /// The scope this one was opened from; nil for the root scope.
    public var parent: Scope? { parentReference }
    /// `parent`'s storage: set in `init`, taken only by `deinit` (see there).
    @exclusivity(unchecked) private var parentReference: Scope?

    /// The storage of `disposedWord` and `tableWord`, 64 bytes from the object's start, in the scope object
    /// itself (a block of their own would cost every scope a `malloc` and a `free`), as swift-atomics'
    /// `ManagedAtomic` keeps its value. Swift code never reads or writes it after `init`: every access is atomic,
    /// through the words. A scope outlives every use of its words, since whoever reads them holds the scope.
    var words: (UInt, UInt) = (0, 0)
    @usableFromInline let registry: Registry
    /// `registry.tableWord`, kept beside `words`, so that a lock-free resolve loads nothing from the registry
    /// object, whose reference count every scope's opening and release write, and whose counters every creation.
    @usableFromInline let registryTableWord: AtomicWord
    /// The storage of `ownLock`'s word, the last, 64 bytes after `words`: on the line after the one that every
    /// lock-free resolve in the scope reads, which opening and disposing its children would otherwise take from
    /// the readers' caches. The words before it are padding.
    var lockWords: (UInt, UInt, UInt, UInt, UInt) = (0, 0, 0, 0, 0)

    /// The open children by their key's hash. So a scope is detached by identity, without comparing keys.
    /// Also guarded by `ownLock` (but the root's): changed with both held, read with either. A child disposed while the
    /// container's lock was busy stays here, disposed, until the lock's next holder detaches it
    /// (``DeferredDetach``): lookups skip disposed children.
    @exclusivity(unchecked) var children = ChildTable()
    /// The next open child in this one's bucket of its parent's ``ChildTable``.
    @exclusivity(unchecked) var nextInBucket: Scope?
    @exclusivity(unchecked) private var nextChildSequence = 0
    /// This child scope's caches and published instances (the root scope's live on the registrations).
    @exclusivity(unchecked) var table: ScopeTable?
    /// What this scope adds to the registrations, for itself and the scopes below: values put here with
    /// `provide` and registrations made with `register`, by the key they resolve under.
    @exclusivity(unchecked) var locals = ScopeLocals()
    /// Cached instances with a disposal hook, in order of creation. Guarded by `ownLock` (with the container's
    /// lock held too, except in a disposal that finds the container's lock busy).
    @exclusivity(unchecked) var disposals: [DisposalRecord] = []
    /// With ``Container/tracksInstances`` on: weak references to the instances cached here, kept after
    /// disposal for ``survivors``.
    @exclusivity(unchecked) var tracked: [TrackedInstance] = []
    /// How many disposals of children detached from this scope are still running their hooks (see
    /// ``Scope/dispose()-3kxxz``): this scope's own hooks wait for them. Guarded by `ownLock`.
    @exclusivity(unchecked) var runningChildDisposals = 0
    /// The disposal of this scope's subtree that waits for those, if any. Guarded by `ownLock`.
    @exclusivity(unchecked) var waitingDisposal: WaitingDisposal?
    /// The scope below this one on ``DeferredDetach``'s stack (`Unmanaged` bits); written only before the push
    /// that publishes this scope there, read only by the thread that took the stack.
    @exclusivity(unchecked) var nextDetached: UInt = 0

    init(root registry: Registry) {
        self.scopeKey = nil
        self.sharesKey = true
        self.keyHash = 0
        self.parentReference = nil
        self.registry = registry
        self.registryTableWord = registry.tableWord
        self.sequence = 0
        initializeWords(isDisposed: false, isRoot: true)
    }

    private init(key: ScopeKey, sharesKey: Bool, keyHash: Int, parent: Scope, sequence: Int, isDisposed: Bool) {
        self.scopeKey = key
        self.sharesKey = sharesKey
        self.keyHash = keyHash
        self.parentReference = parent
        self.registry = parent.registry
        self.registryTableWord = parent.registryTableWord
        self.sequence = sequence
        initializeWords(isDisposed: isDisposed, isRoot: false)
    }

    /// Releases the ancestors that only this scope keeps one by one: released the usual way, each scope's
    /// deinit would release its parent inside it, and a chain of 50,000 nested scopes would take 50,000 frames.
    /// A scope that only this loop holds is one no other thread can reach (scopes are never referenced
    /// weakly), so taking its parent reference races with nothing.
    deinit {
        // A child of the root (a request's scope) has no chain to unwind: its parent is the container's.
        guard let parent = parentReference, parent.parentReference != nil else { return }
        _ = consume parent
        var ancestor = parentReference.take()
        while isKnownUniquelyReferenced(&ancestor) {
            let next = ancestor.unsafelyUnwrapped.parentReference.take()
            ancestor = next
        }
    }

    /// The container's root scope, where singletons live.
    public var root: Scope {
        // Found by walking up (scopes are a few levels deep), rather than kept: a reference per scope would
        // cost every scope a retain and a release, for what only a singleton's creation asks.
        var scope = self
        while let parent = scope.parent { scope = parent }
        return scope
    }

    /// This scope itself.
    @inlinable
    public var resolutionScope: Scope { self }

    /// Whether the scope has been disposed; a disposed scope resolves nothing and opens nothing.
    public var isDisposed: Bool {
        registry.lock.withLock { _ in isDisposedValue }
    }

    /// Opens a child scope, or returns the open child that already has `key` (``ScopeSharing/byKey``); a scope
    /// that no other caller gets is opened with `sharing: .never`.
    ///
    /// Opening from a disposed scope returns a scope that is disposed too.
    /// - Parameter key: Any hashable value: a request id, a screen, a session.
    /// - Returns: The child scope.
    public func openScope(_ key: AnyHashable) -> Scope {
        openScope(ScopeKey(erased: key))
    }

    /// Opens a child scope, or returns the open child that already has `key`: the same as passing the key as
    /// `AnyHashable`, and what a key of a concrete type calls (an `Int` or `String` key is kept as itself).
    /// - Parameter key: Any hashable value: a request id, a screen, a session.
    /// - Returns: The child scope.
    @inlinable
    public func openScope<Key: Hashable>(_ key: Key) -> Scope {
        openScope(ScopeKey(key))
    }

    /// Opens a child scope with `key`: with ``ScopeSharing/byKey``, or returns the open child that has an equal key
    /// (``openScope(_:)-(AnyHashable)``); with ``ScopeSharing/never``, a new child that no lookup by key returns,
    /// even when an open child has an equal key (a request's scope keyed by a client-supplied id).
    ///
    /// Opening from a disposed scope returns a scope that is disposed too.
    /// - Parameters:
    ///   - key: Any hashable value: a request id, a screen, a session.
    ///   - sharing: Whether an open child with an equal key is returned.
    /// - Returns: The child scope.
    public func openScope(_ key: AnyHashable, sharing: ScopeSharing) -> Scope {
        openScope(ScopeKey(erased: key), sharing: sharing)
    }

    /// Opens a child scope with `key`, shared or of the caller's own (see ``openScope(_:sharing:)-(AnyHashable,ScopeSharing)``):
    /// what a key of a concrete type calls.
    /// - Parameters:
    ///   - key: Any hashable value: a request id, a screen, a session.
    ///   - sharing: Whether an open child with an equal key is returned.
    /// - Returns: The child scope.
    @inlinable
    public func openScope<Key: Hashable>(_ key: Key, sharing: ScopeSharing) -> Scope {
        openScope(ScopeKey(key), sharing: sharing)
    }

    @usableFromInline
    func openScope(_ key: ScopeKey, sharing: ScopeSharing) -> Scope {
        switch sharing.kind {
        case .byKey:
            return openScope(key)
        case .never:
            // Nothing to compare: the key is only hashed (before the lock: hashing may run user code).
            let hash = key.hashValue
            return registry.lock.withLock { locked in addChild(key, hash: hash, sharesKey: false, locked) }
        }
    }

    @usableFromInline
    func openScope(_ key: ScopeKey) -> Scope {
        // Hashed before the lock: hashing a key may run user code.
        let hash = key.hashValue
        guard key.comparesWithUserCode else {
            return registry.lock.withLock { locked in
                child(key, hash: hash, locked) ?? addChild(key, hash: hash, sharesKey: true, locked)
            }
        }
        // The open children of the same hash are compared with the lock released, and the key is added once no
        // child of its hash is left uncompared. (A match found is returned even if it is disposed meanwhile:
        // it was open when it was found, as it would be had the disposal come just after.)
        var compared = Set<ObjectIdentifier>()
        // Holds the compared children, so that an identifier in `compared` names no other scope meanwhile.
        var held: [[Scope]] = []
        while true {
            let (candidates, added) = registry.lock.withLock { locked -> ([Scope], Scope?) in
                let candidates = uncompared(hash: hash, compared: compared, locked)
                return (candidates, candidates.isEmpty ? addChild(key, hash: hash, sharesKey: true, locked) : nil)
            }
            if let added { return added }
            if let match = candidates.first(where: { $0.scopeKey == key }) { return match }
            for candidate in candidates { compared.insert(ObjectIdentifier(candidate)) }
            held.append(candidates)
        }
    }

    /// The open children that share their key and whose key has `hash`, except those in `compared`.
    private func uncompared(hash: Int, compared: Set<ObjectIdentifier>, _ locked: borrowing Locked) -> [Scope] {
        children.all(hash: hash) { child in
            child.sharesKey && !child.isDisposedValue && !compared.contains(ObjectIdentifier(child))
        }
    }

    /// Opens a new child scope under a key made for it (see ``Resolving/openScope()``).
    func openAnonymousScope() -> Scope {
        registry.lock.withLock { locked in
            // Hashed under the lock: the key is Stimpak's own, whose hash runs no user code.
            let key = ScopeKey.anonymous(nextChildSequence + 1)
            return addChild(key, hash: key.hashValue, sharesKey: true, locked)
        }
    }

    /// A new child scope that no other caller gets: with `key`, ``ScopeSharing/never``, or anonymous when it is
    /// nil (`withScope`'s scope, which it disposes: shared, it would be disposed under another caller).
    func openOwnScope(_ key: AnyHashable?) -> Scope {
        guard let key else { return openAnonymousScope() }
        return openScope(ScopeKey(erased: key), sharing: .never)
    }

    /// A new child with `key`, whose hash is `hash`, linked among the open children (unless this scope is
    /// disposed: then the child is born disposed); lookups by key find it when it `sharesKey`.
    private func addChild(_ key: ScopeKey, hash: Int, sharesKey: Bool, _ locked: borrowing Locked) -> Scope {
        nextChildSequence += 1
        // Under this scope's own lock too: a disposal that finds the container's lock busy reads `children` and
        // marks this scope disposed under it alone.
        return changingChildren {
            let child = Scope(
                key: key, sharesKey: sharesKey, keyHash: hash, parent: self, sequence: nextChildSequence,
                isDisposed: isDisposedValue)
            if !isDisposedValue { children.insert(child) }
            return child
        }
    }

    /// The open child scope with `key` that shares it (opened ``ScopeSharing/byKey``), if any: a scope opened
    /// ``ScopeSharing/never`` is found only through the value `openScope` returned (and in ``Resolving/openScopes``).
    public subscript(key: AnyHashable) -> Scope? {
        let key = ScopeKey(erased: key)
        let hash = key.hashValue
        guard key.comparesWithUserCode else { return registry.lock.withLock { locked in child(key, hash: hash, locked) } }
        // Compared with the lock released: the key's `==` is user code.
        let candidates = registry.lock.withLock { locked in uncompared(hash: hash, compared: Set(), locked) }
        return candidates.first { $0.scopeKey == key }
    }

    /// The open children in opening order.
    func openChildrenInOrder(_ locked: borrowing Locked) -> [Scope] {
        childrenInOrder(includingDisposed: false, locked)
    }

    /// The children in opening order; `includingDisposed`, also those disposed that wait to be detached.
    func childrenInOrder(includingDisposed: Bool, _ locked: borrowing Locked) -> [Scope] {
        let children = includingDisposed ? children.all : children.all.filter { !$0.isDisposedValue }
        return children.sorted { $0.sequence < $1.sequence }
    }

    /// The open child that shares `key`, whose hash is `hash`: a key that compares without user code.
    private func child(_ key: ScopeKey, hash: Int, _ locked: borrowing Locked) -> Scope? {
        children.first(hash: hash) { $0.sharesKey && !$0.isDisposedValue && $0.scopeKey == key }
    }

    /// Puts an existing value into this scope, so that it resolves here and in the scopes below, and
    /// nowhere else. It takes precedence over a registration of the same type and key.
    ///
    /// The scope does not dispose it: whoever made it owns it. Does nothing on a disposed scope.
    /// - Parameters:
    ///   - value: The value, for example the current request.
    ///   - type: The type it resolves as; defaults to the value's static type.
    ///   - key: The key it resolves under, or nil.
    @inlinable
    public func provide<Service: Sendable>(_ value: Service, as type: Service.Type = Service.self, key: AnyHashable? = nil) {
        // Boxed here, where `Service` is known: in the caller's specialization, the box's type is no generic
        // metadata to look up at run time, and whether `Service` is a class no cast to ask.
        provide(value, boxed: CachedInstance.object(for: value), as: ServiceKey(service: Service.self, key: key))
    }

    /// ``provide(_:as:key:)`` with `value` boxed for the lock-free path (``CachedInstance/object(for:)``).
    @usableFromInline
    func provide(_ value: Any, boxed box: AnyObject, as serviceKey: ServiceKey) {
        // Interned before the lock: its `==` is user code.
        guard let serviceKey = registry.intern(serviceKey, adding: true) else { return }
        let (retired, replaced): (LookupTable?, Local?) = registry.lock.withLock { locked in
            guard !isDisposedValue else { return (nil, nil) }
            let replaced = locals.updateValue(.value(value), forKey: serviceKey)
            let (index, retired) = registry.markScopeLocal(
                serviceKey, replacingRegistration: replaced?.isRegistration == true, locked)
            publishProvided(box, index: index, locked)
            return (retired, replaced)
        }
        Registry.release(retiredTable: retired)
        // The value or registration it replaces is released with the lock released: a deinit may resolve. No
        // lock-free reader holds it unretained (a published value stays in the scope's table until disposal).
        withExtendedLifetime(replaced) {}
    }

    /// Publishes this child scope's own `provide`d value for the lock-free path, and unpublishes what the
    /// scopes below published for an ancestor's value, which this one now shadows. A published box is
    /// never replaced (readers may hold its address until the scope is disposed): a scope that already
    /// has one for the key (provided twice, or shadowed) is left to the locked path, which reads `locals`.
    private func publishProvided(_ box: AnyObject, index: Int, _ locked: borrowing Locked) {
        if cache(for: index, locked) == nil {
            publishBelowOwner(box, index: index, locked)
        } else {
            table?.unpublish(for: index, locked)
        }
        unpublishBelow(index: index, locked)
    }

    /// Unpublishes what the scopes below this one published at `index` (a locals index) for a value or a
    /// registration of an ancestor, which this scope now shadows; they go back to the locked path.
    func unpublishBelow(index: Int, _ locked: borrowing Locked) {
        guard !children.isEmpty else { return }
        for scope in subtreeDeepestFirst(locked) where scope !== self {
            scope.table?.unpublish(for: index, locked)
        }
    }

    /// Unpublishes what this scope and those below published at `index`: a registration made or removed
    /// here changes what the key means from here down.
    func unpublishHereAndBelow(index: Int, _ locked: borrowing Locked) {
        table?.unpublish(for: index, locked)
        unpublishBelow(index: index, locked)
    }

    /// Takes the container's `registration` out of use (unregistered, replaced) as the scopes' tables see it: an
    /// open scope's table that names it for an instance it keeps (``ScopeTable/pinRegistration(_:index:_:)``)
    /// holds it from now on, and a creation that ends later keeps its instance with the registration held.
    /// Call on the root before anything releases the registration.
    func takeOutOfTables(_ registration: any Registration, _ locked: borrowing Locked) {
        guard registration.takeOutOfTables(locked) else { return }
        let index = registration.index
        // Every open scope, in no order; the root has no table.
        var pending = children.all.filter { !$0.isDisposedValue }
        while let scope = pending.popLast() {
            scope.table?.pinRegistration(registration, index: index, locked)
            if !scope.children.isEmpty { pending.append(contentsOf: scope.children.all.filter { !$0.isDisposedValue }) }
        }
    }

    /// Publishes `box`, a cached instance (see ``CachedInstance``), in this child scope's table for the lock-free
    /// path, held by `cache` (the cached instance itself,
    /// or the owner's slot of a `.scopedTo` instance): for what the scope provides itself, or found once in
    /// an ancestor (a `.scopedTo` instance, a `provide`d value). The owner keeps disposing what it made;
    /// disposing it disposes this scope first. A scope that already has an entry keeps it (see
    /// ``publishProvided(_:index:_:)``).
    func publishBelowOwner(_ cache: AnyObject, box: AnyObject, index: Int, _ locked: borrowing Locked) {
        guard parent != nil, !isDisposedValue, self.cache(for: index, locked) == nil else { return }
        setCache(cache, for: index, locked)
        publish(box, index: index, locked)
    }

    /// The same, for a cached instance that its entry holds itself (a `provide`d value).
    func publishBelowOwner(_ box: AnyObject, index: Int, _ locked: borrowing Locked) {
        publishBelowOwner(box, box: box, index: index, locked)
    }
}

/// What a scope adds under a service key: a value put there with `provide`, or a registration made there
/// with `register`.
enum Local {
    case value(Any)
    case registration(any Registration)

    var isRegistration: Bool {
        if case .registration = self { true } else { false }
    }
}
