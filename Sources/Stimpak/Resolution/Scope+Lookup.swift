/// The locked lookup: under the container's lock, what resolves a request here (a registration, a
/// `provide`d value, an implicit wrapper), or the `notRegistered` error.
extension Scope {
    /// The locked path: takes the container's lock once for the lookup and, for a reused service, the
    /// cache. Factories run with the lock released.
    @usableFromInline
    func lockAndResolve<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?
    ) throws(ResolutionError) -> Service {
        let value: Service
        do throws(ResolutionError) {
            // Observed (an observer, or dependency recording): every resolve comes here; the word is read only here.
            if registry.observedWord.loadRelaxed() == 0 {
                value = try lockAndResolveUnobserved(Service.self, arguments, key: key)
            } else {
                value = try resolveObserved(Service.self, arguments, key: key) { () throws(ResolutionError) in
                    try lockAndResolveUnobserved(Service.self, arguments, key: key)
                }
            }
        } catch {
            try? ResolutionContext.endLockedPathResolve(failing: true)
            throw error
        }
        try ResolutionContext.endLockedPathResolve(failing: false)
        return value
    }

    private func lockAndResolveUnobserved<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?
    ) throws(ResolutionError) -> Service {
        let lookup = try lockAndFind(Service.self, arguments, key: key)
        switch consume lookup {
        case .resolved(let value):
            return Self.service(value, as: Service.self)
        case .registration(let found, let locked):
            return try resolveRegistered(
                found.resolver, arguments, registeredIn: found.registeredIn, localsIndex: found.localsIndex, locked)
        }
    }

    /// Takes the lock and finds what resolves (`Service`, `Args`, `key`) here (see ``find(_:_:_:_:)``): a
    /// registration, which comes with the lock still held; or, with the lock released, a `provide`d value or an
    /// implicit wrapper. Throws, with the lock released, when this scope is disposed or nothing is found.
    func lockAndFind<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?
    ) throws(ResolutionError) -> Lookup<Service, Args> {
        let requested = ServiceKey(service: Service.self, arguments: Args.self, key: key)
        // Interned before the lock: its `==` is user code. None equal: no registration or `provide` used the key.
        let interned = registry.intern(requested, adding: false)
        let locked = registry.lock.acquire()
        if isDisposedValue {
            registry.lock.release(locked)
            throw failure(.scopeDisposed, requested, scopeKey: self.key)
        }
        registry.publishTableIfNeeded(locked)
        guard let interned else {
            registry.lock.release(locked)
            let implicit: Service = try notFound(requested, arguments, entry: nil)
            return .resolved(implicit)
        }
        switch find(interned, Service.self, Args.self, locked) {
        case .value(let value):
            registry.lock.release(locked)
            return .resolved(value)
        case .registration(let resolver, let registeredIn, let localsIndex):
            return .registration(
                FoundRegistration(resolver: resolver, registeredIn: registeredIn, localsIndex: localsIndex), locked)
        case .missing(let entry):
            registry.lock.release(locked)
            let implicit: Service = try notFound(requested, arguments, entry: entry)
            return .resolved(implicit)
        }
    }

    /// What the locked path finds for `requested`: a `provide`d value or a scope's registration, searching
    /// from this scope up, or else the container's registration.
    func find<Service, Args>(
        _ requested: ServiceKey, _ type: Service.Type, _ arguments: Args.Type, _ locked: borrowing Locked
    ) -> Found<Service, Args> {
        let entry = registry.entries[requested]
        if let entry, entry.hasScopeLocals {
            var scope: Scope? = self
            while let current = scope {
                switch current.locals[requested] {
                case .value(let value)?:
                    // An ancestor's value: published here too, so that the next resolve from this scope
                    // finds it lock-free, whatever the depth.
                    if current !== self {
                        let object = CachedInstance.object(for: Self.service(value, as: Service.self))
                        publishBelowOwner(object, index: entry.localsIndex, locked)
                    }
                    return .value(value)
                case .registration(let registration)?:
                    // Stored under its own key, which holds the identities of `Service` and `Args`.
                    return .registration(
                        unsafeDowncast(registration, to: ServiceResolver<Service, Args>.self), registeredIn: current,
                        localsIndex: entry.localsIndex)
                case nil:
                    scope = current.parent
                }
            }
        }
        guard let registration = entry?.registration else { return .missing(entry) }
        // The registry key holds the identities of `Service` and `Args`, so this is the registration's type.
        return .registration(
            unsafeDowncast(registration, to: ServiceResolver<Service, Args>.self), registeredIn: nil, localsIndex: 0)
    }

    /// An implicit wrapper for `requested`, or the `notRegistered` error. Call without the lock.
    func notFound<Service, Args>(
        _ requested: ServiceKey, _ arguments: Args, entry: Registry.Entry?
    ) throws(ResolutionError) -> Service {
        if let implicit = try implicitInstance(Service.self, arguments, key: requested.key) { return implicit }
        var error = failure(.notRegistered, requested)
        // Only `provide` or a scope's `register` made the entry: it exists in a scope this one does not see.
        error.isProvidedElsewhere = entry?.hasScopeLocals ?? false
        error.isRegisteredElsewhere = entry?.hasScopeRegistrations ?? false
        error.resolvedFromRoot = parent == nil
        throw error
    }

    /// `Service` as a wrapper that resolves without being registered, with no runtime arguments, or nil.
    static func implicitWrapper<Service, Args>(_ type: Service.Type, _ arguments: Args.Type) -> (any ImplicitService.Type)? {
        guard ObjectIdentifier(Args.self) == ObjectIdentifier(Void.self) else { return nil }
        return Service.self as? any ImplicitService.Type
    }

    /// A wrapper that resolves without being registered (``Lazy``, ``Provider``, ``WeakReference``, an
    /// array of every registration), or nil. Call without the lock.
    func implicitInstance<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?
    ) throws(ResolutionError) -> Service? {
        guard let wrapper = Self.implicitWrapper(Service.self, Args.self) else { return nil }
        return try wrapper.implicitInstance(from: self, key: key) as? Service
    }

    /// Whether a registration or a `provide`d value resolves `Service` with `Args` under `key` here (not an
    /// implicit wrapper).
    func findsRegistrationOrValue<Service, Args>(_ type: Service.Type, _ arguments: Args.Type, key: AnyHashable?) -> Bool {
        let requested = ServiceKey(service: Service.self, arguments: Args.self, key: key)
        guard let interned = registry.intern(requested, adding: false) else { return false }
        return registry.lock.withLock { locked in
            if case .missing = find(interned, Service.self, Args.self, locked) { return false }
            return true
        }
    }

    /// The locked path for a reused registration the lock-free path found without an instance: it goes
    /// straight to the cache, unless the registrations changed since (then it looks up again).
    @usableFromInline
    func resolveUncreated<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ arguments: Args, generation: Int
    ) throws(ResolutionError) -> Service {
        let locked = registry.lock.acquire()
        guard !isDisposedValue, registry.generation == generation else {
            registry.lock.release(locked)
            return try lockAndResolve(Service.self, arguments, key: resolver.serviceKey.key)
        }
        return try resolveRegistered(resolver, arguments, locked)
    }
}

extension Scope {
    /// A value that ``find(_:_:_:_:)`` or ``lockAndFind(_:_:key:)`` found, as the `Service` it is: `provide`
    /// stored it under `Service`'s key, and an implicit wrapper was made as one.
    static func service<Service>(_ value: Any, as type: Service.Type) -> Service {
        value as! Service
    }
}

/// What the locked path found for a resolve (see ``Scope/find(_:_:_:_:)``). A value is held as `Any`, the
/// registration by reference: no payload's layout depends on `Service`, so unspecialized code (the locked
/// and the async paths) moves the enum without asking the runtime for its metadata (about 330 instructions a
/// lookup).
enum Found<Service, Args> {
    case value(Any)
    case registration(ServiceResolver<Service, Args>, registeredIn: Scope?, localsIndex: Int)
    case missing(Registry.Entry?)
}

/// What ``Scope/lockAndFind(_:_:key:)`` found.
enum Lookup<Service, Args>: ~Copyable {
    /// A value to return (a `provide`d one, an implicit wrapper), held as `Any` (see ``Found``); the lock is
    /// released.
    case resolved(Any)
    /// A registration to resolve, and the token of the lock, still held.
    case registration(FoundRegistration<Service, Args>, Locked)
}

/// A registration that resolves a request (see ``Lookup``). One payload, not three beside the token: a
/// non-copyable enum's case of several payloads, one of them an `Int`, crashes the Swift 6.3 optimizer.
struct FoundRegistration<Service, Args> {
    let resolver: ServiceResolver<Service, Args>
    /// The scope that made it, or nil for the container's.
    let registeredIn: Scope?
    /// Its key's locals index, for a scope's registration.
    let localsIndex: Int
}
