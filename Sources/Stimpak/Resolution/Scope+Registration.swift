/// Registrations: the container's, made through its root scope, and a child scope's own.
extension Scope {
    /// Adds a registration: to the container when this is the root scope, else to this scope.
    ///
    /// A child scope's registration is kept in its `locals`, like a `provide`d value: the locked path finds it
    /// while searching the scopes from the resolving one up, before the container's. It caches where its
    /// reuse says, with this scope in the root's place: a singleton (or weak, eager) in this scope, an
    /// `.inScope` instance in the resolving scope, a `.scopedTo` one in the nearest matching scope from the
    /// resolving one up to this one. A cached instance is published in the resolving scope's table at the
    /// key's locals index, so that the next resolve there is lock-free (route `.provided`). On a disposed
    /// scope, nothing is added.
    @usableFromInline
    func add<Service, Args, Failure: Error>(
        reuse: Reuse?,
        key: AnyHashable?,
        policy: DuplicatePolicy<Failure>,
        disposesInstances: Bool = true,
        dependencies: [Dependency]? = nil,
        factory: @escaping (Scope, Args) throws -> Service,
        asyncFactory: ((Scope, Args) async throws -> Service)? = nil,
        isMainActor: Bool = false
    ) throws(Failure) -> ServiceResolver<Service, Args> {
        // Interned before the lock: its `==` is user code.
        let keyBox = registry.registeredBox(for: key)
        guard parent != nil else {
            return try addToContainer(
                reuse: reuse, keyBox: keyBox, policy: policy, disposesInstances: disposesInstances,
                dependencies: dependencies, factory: factory, asyncFactory: asyncFactory, isMainActor: isMainActor)
        }
        let locked = registry.lock.acquire()
        let resolver = makeRegistration(
            reuse: reuse, keyBox: keyBox, disposesInstances: disposesInstances, dependencies: dependencies, factory: factory,
            asyncFactory: asyncFactory, isMainActor: isMainActor, locked)
        // Its instances live no longer than this scope, and its factory receives this scope or one below:
        // whatever it resolves from there lives at least as long.
        resolver.allowsCaptiveDependencies = true
        let serviceKey = resolver.serviceKey
        guard !isDisposedValue else {
            registry.lock.release(locked)
            return resolver
        }
        if case .registration? = locals[serviceKey] {
            do {
                guard try policy.resolveConflict(serviceKey) else {
                    registry.lock.release(locked)
                    return resolver
                }
            } catch {
                registry.lock.release(locked)
                throw error
            }
        }
        // The registration or `provide`d value it replaces.
        let replaced = locals.updateValue(.registration(resolver), forKey: serviceKey)
        let (index, retired) = registry.markScopeLocal(
            serviceKey, isRegistration: true, replacingRegistration: replaced != nil, locked)
        // What this scope and those below published for the key came from above, or from the replaced one.
        unpublishHereAndBelow(index: index, locked)
        registry.lock.release(locked)
        Registry.release(retiredTable: retired)
        // Released outside the lock: a factory or a value may hold anything. A thread resolving it holds its own
        // reference, and no lock-free structure holds it unretained (its key's route is `.provided`; a published
        // value stays in the scope's table until disposal).
        withExtendedLifetime(replaced) {}
        return resolver
    }

    /// The container's registration, replacing or keeping an existing one as `policy` says.
    private func addToContainer<Service, Args, Failure: Error>(
        reuse: Reuse?,
        keyBox: AnyKeyBox?,
        policy: DuplicatePolicy<Failure>,
        disposesInstances: Bool,
        dependencies: [Dependency]?,
        factory: @escaping (Scope, Args) throws -> Service,
        asyncFactory: ((Scope, Args) async throws -> Service)?,
        isMainActor: Bool
    ) throws(Failure) -> ServiceResolver<Service, Args> {
        // A replaced registration is retired: released out of the lock once no reader or factory uses it.
        // Returned as `AnyObject`: a `ServiceResolver<Service, Args>` result would have the unspecialized caller
        // look that type's metadata up once more per registration (a search of the runtime's cache).
        let registered = try registry.change { (locked) throws(Failure) -> AnyObject in
            let resolver = makeRegistration(
                reuse: reuse, keyBox: keyBox, disposesInstances: disposesInstances, dependencies: dependencies,
                factory: factory, asyncFactory: asyncFactory, isMainActor: isMainActor, locked)
            // A disposed container resolves nothing: the registration is refused, and validation says so.
            guard !isDisposedValue else {
                registry.rejectedRegistrations.append(resolver.serviceKey)
                return resolver
            }
            // One lookup in the common case (a new key): put it in, then look at what it replaced.
            let serviceKey = resolver.serviceKey
            var replaced: (any Registration)? = resolver
            swap(&registry.entries[serviceKey, default: Registry.Entry()].registration, &replaced)
            guard let existing = replaced else { return resolver }
            // Refused (the policy says no, or throws): the first one goes back.
            var refused = true
            defer { if refused { registry.entries[serviceKey]?.registration = existing } }
            if try policy.resolveConflict(serviceKey) {
                refused = false
                takeOutOfTables(existing, locked)
                registry.retire(existing, locked)
            }
            return resolver
        }
        // The closure returned the `ServiceResolver<Service, Args>` it made.
        return unsafeDowncast(registered, to: ServiceResolver<Service, Args>.self)
    }

    /// A new registration with the decorators that apply to it.
    private func makeRegistration<Service, Args>(
        reuse: Reuse?,
        keyBox: AnyKeyBox?,
        disposesInstances: Bool,
        dependencies: [Dependency]?,
        factory: @escaping (Scope, Args) throws -> Service,
        asyncFactory: ((Scope, Args) async throws -> Service)?,
        isMainActor: Bool,
        _ locked: borrowing Locked
    ) -> ServiceResolver<Service, Args> {
        let resolver = ServiceResolver(
            keyBox: keyBox, reuse: reuse ?? registry.defaultReuse, index: registry.makeIndex(locked), registry: registry,
            disposesInstances: disposesInstances, dependencies: dependencies, factory: factory,
            asyncFactory: asyncFactory, isMainActor: isMainActor, locked)
        for decorator in registry.decorators where decorator.applies(to: resolver.serviceKey) {
            resolver.attach(decorator, locked)
        }
        return resolver
    }

    /// Removes the container's registration (from the root scope) or this scope's own.
    func unregister(_ key: ServiceKey) -> Bool {
        // Interned before the lock: its `==` is user code. None equal: nothing was registered under it.
        guard let key = registry.intern(key, adding: false) else { return false }
        guard parent != nil else {
            return registry.change { locked in
                guard let removed = registry.entries[key]?.registration else { return false }
                registry.entries[key]?.registration = nil
                takeOutOfTables(removed, locked)
                registry.retire(removed, locked)
                return true
            }
        }
        let (removed, retired): ((any Registration)?, LookupTable?) = registry.lock.withLock { locked in
            guard case .registration(let registration)? = locals[key] else { return (nil, nil) }
            locals[key] = nil
            if let index = registry.entries[key]?.localsIndex {
                unpublishHereAndBelow(index: index, locked)
            }
            // A new generation, as when a scope's registration is replaced.
            return (registration, registry.replaceTable(locked))
        }
        Registry.release(retiredTable: retired)
        return removed != nil
    }

    /// Whether a registration for `key` is visible from this scope: its own or an ancestor's, or the
    /// container's.
    func isRegistered(_ key: ServiceKey) -> Bool {
        guard let key = registry.intern(key, adding: false) else { return false }
        return registry.lock.withLock { locked in
            guard let entry = registry.entries[key] else { return false }
            if entry.registration != nil { return true }
            guard entry.hasScopeRegistrations else { return false }
            return scopeRegistration(for: key, locked) != nil
        }
    }

    /// The nearest registration made in this scope or an ancestor for `key`, and the scope that made it.
    func scopeRegistration(for key: ServiceKey, _ locked: borrowing Locked) -> (registration: any Registration, scope: Scope)? {
        var scope: Scope? = self
        while let current = scope {
            if case .registration(let registration)? = current.locals[key] { return (registration, current) }
            scope = current.parent
        }
        return nil
    }
}

extension Scope {
    /// Copies of the open scopes below this one, depth first, children in opening order: keys, locals and
    /// where each one's parent is (for validation's throwaway copy of the scope tree). Iterative, so depth
    /// costs no stack.
    func copyOfOpenScopes(_ locked: borrowing Locked) -> [ScopeCopy] {
        var copies: [ScopeCopy] = []
        var pending: [(scope: Scope, parent: Int?)] = openChildrenInOrder(locked).reversed().map { ($0, nil) }
        while let (scope, parent) = pending.popLast() {
            // Only the root has no key, and the root is no one's child.
            guard let key = scope.key else { continue }
            var locals: [ServiceKey: ScopeCopy.LocalCopy] = [:]
            for (service, local) in scope.locals {
                switch local {
                case .value(let value): locals[service] = .value(value)
                case .registration(let registration): locals[service] = .registration(registration.copy(locked))
                }
            }
            copies.append(ScopeCopy(key: key, sharing: scope.sharesKey ? .byKey : .never, locals: locals, parent: parent))
            let place = copies.count - 1
            for child in scope.openChildrenInOrder(locked).reversed() { pending.append((child, place)) }
        }
        return copies
    }

    /// Takes `locals`, copied from another container's scope under that container's lock: its values as they
    /// are, its registrations made again in this container's registry, under this container's lock only.
    func adopt(_ locals: [ServiceKey: ScopeCopy.LocalCopy]) {
        let retired: [LookupTable] = registry.lock.withLock { locked in
            var retired: [LookupTable] = []
            for (key, local) in locals {
                let marked: (index: Int, retired: LookupTable?)
                switch local {
                case .value(let value):
                    self.locals[key] = .value(value)
                    marked = registry.markScopeLocal(key, locked)
                case .registration(let registration):
                    let duplicate = registration.register(in: registry, index: registry.makeIndex(locked), locked)
                    self.locals[key] = .registration(duplicate)
                    marked = registry.markScopeLocal(key, isRegistration: true, locked)
                }
                if let table = marked.retired { retired.append(table) }
            }
            return retired
        }
        for table in retired { Registry.release(retiredTable: table) }
    }
}
