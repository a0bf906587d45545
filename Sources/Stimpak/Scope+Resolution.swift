/// The resolve path. See ARCHITECTURE.md for the sketch.
extension Scope {
    /// Finds or makes the instance registered for (`Service`, `Args`, `key`).
    ///
    /// Takes the container's lock once for the lookup and, for a reused service, the cache; a cached
    /// instance is returned without allocating. Factories run with the lock released.
    func resolveInstance<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?
    ) throws(ResolutionError) -> Service {
        let requested = ServiceKey(service: Service.self, arguments: Args.self, key: key)
        let lock = registry.lock
        lock.lock()
        if isDisposedValue {
            lock.unlock()
            throw failure(.scopeDisposed, requested, scopeKey: self.key)
        }
        guard let entry = registry.entries[requested] else {
            lock.unlock()
            throw failure(.notRegistered, requested)
        }
        if entry.hasScopeLocals {
            var scope: Scope? = self
            while let current = scope {
                if let value = current.locals[requested] as? Service {
                    lock.unlock()
                    return value
                }
                scope = current.parent
            }
        }
        guard let registration = entry.registration else {
            lock.unlock()
            throw failure(.notRegistered, requested)
        }
        // The registry key holds the identities of `Service` and `Args`, so this is the registration's type.
        let resolver = unsafeDowncast(registration, to: ServiceResolver<Service, Args>.self)

        guard let owner = resolver.reuse.cachingScope(for: self) else {
            let onResolved = resolver.onResolved
            lock.unlock()
            return try make(resolver, arguments, in: self, onResolved: onResolved, context: .current)
        }
        let cache = owner.cache(for: resolver)
        let slot: Slot<Service>
        switch resolver.matching {
        case .ignored:
            slot = cache.single
        case .hashed(let hashKey):
            let argumentsKey = hashKey(arguments)
            if let existing = cache.hashed[argumentsKey] {
                slot = existing
            } else {
                slot = Slot()
                cache.hashed[argumentsKey] = slot
            }
        case .compared(let isEqual):
            slot = comparedSlot(in: cache, for: arguments, isEqual: isEqual)
        }
        return try resolve(slot, of: resolver, arguments, owner: owner, requested: requested)
    }

    /// This scope's cache for `resolver`, made on first use. Call with the lock held.
    @inline(__always)
    private func cache<Service, Args>(for resolver: ServiceResolver<Service, Args>) -> InstanceCache<Service, Args> {
        if parent == nil {
            if let cache = resolver.rootCache { return cache }
            let cache = InstanceCache<Service, Args>()
            resolver.rootCache = cache
            return cache
        }
        if let cache = caches[resolver.index] {
            return unsafeDowncast(cache, to: InstanceCache<Service, Args>.self)
        }
        let cache = InstanceCache<Service, Args>()
        caches[resolver.index] = cache
        return cache
    }

    /// The slot for arguments equal to `arguments` under the user's comparator, which runs with the lock
    /// released. Call with the lock held; returns with it held.
    private func comparedSlot<Service, Args>(
        in cache: InstanceCache<Service, Args>, for arguments: Args, isEqual: (Args, Args) -> Bool
    ) -> Slot<Service> {
        let lock = registry.lock
        var searched = 0
        while searched < cache.compared.count {
            let entries = cache.compared
            lock.unlock()
            let match = entries[searched...].first { isEqual($0.arguments, arguments) }
            lock.lock()
            if let match { return match.slot }
            searched = entries.count
        }
        let slot = Slot<Service>()
        cache.compared.append((arguments, slot))
        return slot
    }

    /// Returns the slot's instance, waits for the thread making it, or makes it: exactly once per slot.
    /// Call with the lock held; returns with it released.
    private func resolve<Service, Args>(
        _ slot: Slot<Service>,
        of resolver: ServiceResolver<Service, Args>,
        _ arguments: Args,
        owner: Scope,
        requested: ServiceKey
    ) throws(ResolutionError) -> Service {
        let lock = registry.lock
        while true {
            if owner.isDisposedValue {
                lock.unlock()
                throw failure(.scopeDisposed, requested, scopeKey: owner.key)
            }
            switch slot.state {
            case .created(let instance):
                lock.unlock()
                return instance
            case .initializing(let instance, let flight):
                lock.unlock()
                let context = ResolutionContext.current
                if flight.owner === context { return instance }
                try context.wait(for: flight, requested: requested)
                lock.lock()
            case .creating(let flight):
                lock.unlock()
                try ResolutionContext.current.wait(for: flight, requested: requested)
                lock.lock()
            case .empty:
                let context = ResolutionContext.current
                let flight = InFlight(owner: context, resolver: resolver)
                defer { flight.finish() }
                slot.state = .creating(flight)
                let onResolved = resolver.onResolved
                let onDispose = resolver.onDispose
                lock.unlock()
                return try make(
                    resolver, arguments, in: owner, into: slot, flight: flight, onResolved: onResolved,
                    onDispose: onDispose, context: context, requested: requested)
            }
        }
    }

    /// Runs the factory of a reused service, caches the instance, then runs its `resolved` callback.
    /// Called with the lock released and the slot marked as being created by this thread.
    private func make<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>,
        _ arguments: Args,
        in owner: Scope,
        into slot: Slot<Service>,
        flight: InFlight,
        onResolved: (@Sendable (Scope, Service) throws -> Void)?,
        onDispose: (@Sendable (Service) throws -> Void)?,
        context: ResolutionContext,
        requested: ServiceKey
    ) throws(ResolutionError) -> Service {
        let lock = registry.lock
        let instance: Service
        do {
            instance = try make(resolver, arguments, in: owner, onResolved: nil, context: context)
        } catch {
            lock.withLock { slot.state = .empty }
            throw error
        }
        let record = DisposalRecord(for: instance, key: resolver.serviceKey, slot: slot, onDispose: onDispose)
        let isCached: Bool = lock.withLock {
            guard !owner.isDisposedValue else {
                slot.state = .empty
                return false
            }
            slot.state = onResolved == nil ? .created(instance) : .initializing(instance, flight)
            if let record { owner.disposals.append(record) }
            return true
        }
        guard isCached else {
            try? record?.dispose()
            throw failure(.scopeDisposed, requested, scopeKey: owner.key)
        }
        guard let onResolved else { return instance }
        // Cached first, so that whatever the callback resolves can get back to this instance.
        do {
            try context.enter(resolver, requested: requested)
            defer { context.leave() }
            try runCallback(onResolved, owner, instance, of: resolver, context: context)
        } catch {
            lock.withLock {
                slot.state = .empty
                if let index = owner.disposals.lastIndex(where: { $0.slot === slot }) {
                    owner.disposals.remove(at: index)
                }
            }
            try? record?.dispose()
            throw error
        }
        lock.withLock { slot.state = .created(instance) }
        return instance
    }

    /// Runs a registration's factory (and, for a transient, its `resolved` callback) with the
    /// registration on this thread's resolution path. Called with the lock released.
    func make<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>,
        _ arguments: Args,
        in scope: Scope,
        onResolved: (@Sendable (Scope, Service) throws -> Void)?,
        context: ResolutionContext
    ) throws(ResolutionError) -> Service {
        try context.enter(resolver, requested: resolver.serviceKey)
        defer { context.leave() }
        let instance: Service
        do {
            instance = try resolver.factory(scope, arguments)
        } catch let error as ResolutionError {
            throw error
        } catch {
            throw ResolutionError(
                .factoryFailed, requested: resolver.serviceKey, path: context.pathKeys, underlyingError: error)
        }
        if let onResolved {
            try runCallback(onResolved, scope, instance, of: resolver, context: context)
        }
        return instance
    }

    private func runCallback<Service, Args>(
        _ callback: @Sendable (Scope, Service) throws -> Void,
        _ scope: Scope,
        _ instance: Service,
        of resolver: ServiceResolver<Service, Args>,
        context: ResolutionContext
    ) throws(ResolutionError) {
        do {
            try callback(scope, instance)
        } catch let error as ResolutionError {
            throw error
        } catch {
            throw ResolutionError(
                .factoryFailed, requested: resolver.serviceKey, path: context.pathKeys, underlyingError: error)
        }
    }

    /// An error for `requested`, carrying this thread's resolution path when it happens inside a factory.
    private func failure(_ code: ResolutionError.Code, _ requested: ServiceKey, scopeKey: AnyHashable? = nil) -> ResolutionError {
        let outer = ResolutionContext.current.pathKeys
        return ResolutionError(code, requested: requested, path: outer.isEmpty ? [] : outer + [requested], scopeKey: scopeKey)
    }
}

extension DisposalRecord {
    /// The record for a new cached instance, or nil when it has neither an `onDispose` hook nor `Disposable`.
    init?<Service>(for instance: Service, key: ServiceKey, slot: AnyObject, onDispose: (@Sendable (Service) throws -> Void)?) {
        if let onDispose {
            self.init(key: key, slot: slot, dispose: { try onDispose(instance) })
        } else if let disposable = instance as? any Disposable {
            self.init(key: key, slot: slot, dispose: { try disposable.dispose() })
        } else {
            return nil
        }
    }
}
