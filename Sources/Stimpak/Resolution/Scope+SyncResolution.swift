/// The synchronous locked path from a registration to its instance.
extension Scope {
    /// Makes a transient, or finds the slot of a reused instance and resolves it. Call with the lock held;
    /// returns with it released.
    ///
    /// A registration made in a scope (`registeredIn`) caches with that scope in the root's place, and its
    /// instance is published at `localsIndex` in the resolving scope's table, where the `.provided` route reads.
    func resolveRegistered<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ arguments: Args, registeredIn: Scope? = nil, localsIndex: Int = 0
    ) throws(ResolutionError) -> Service {
        // (The async path checks the async factories it runs too; this one reads no task-local value.)
        if resolver.reuse.kind == .inScope || resolver.reuse.kind == .scopedTo,
           let captor = ResolutionContext.currentCaptor() {
            registry.lock.unlock()
            throw captiveDependency(resolver, captor: captor)
        }
        switch resolver.reuse.kind {
        case .transient:
            guard !resolver.requiresAwaitHere else {
                registry.lock.unlock()
                throw requiresAwait(resolver)
            }
            let onResolved = resolver.onResolved
            let decorators = resolver.decoratorsIfAny
            registry.lock.unlock()
            var layers: [InstanceDisposal]?
            let instance = try make(
                resolver, arguments, in: self, decorators: decorators, onResolved: onResolved, context: .current,
                layers: &layers)
            guard resolver.isDisposableTransient(instance) else { return instance }
            return try admitDisposableTransient(instance, of: resolver, layers: layers)
        case .graph:
            guard !resolver.requiresAwaitHere else {
                registry.lock.unlock()
                throw requiresAwait(resolver)
            }
            return try resolveGraph(resolver, arguments)
        case .inScope where keepsInTable(resolver, registeredIn: registeredIn):
            // This scope is the owner `cacheOwner` would find: no call, and no retain and release of it.
            return try resolveInTable(resolver, arguments, owner: self)
        case .singleton, .weak, .inScope, .scopedTo:
            let owner = try cacheOwner(of: resolver, registeredIn: registeredIn)
            if owner.keepsInTable(resolver, registeredIn: registeredIn) {
                return try resolveInTable(resolver, arguments, owner: owner)
            }
            let place = try cachePlace(
                of: resolver, arguments, owner: owner, registeredIn: registeredIn, localsIndex: localsIndex)
            return try resolve(
                place.slot, of: resolver, arguments, owner: place.owner, publishes: place.publishes, memoIn: place.memo,
                memoIndex: place.memoIndex)
        }
    }

    /// Returns the `.graph` instance this outermost resolution already made, or makes it and keeps it for
    /// the rest of the resolution (before its `resolved` callback runs, so that the callback can close a
    /// cycle through it). Call with the lock held; returns with it released.
    private func resolveGraph<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ arguments: Args
    ) throws(ResolutionError) -> Service {
        let context = ResolutionContext.current
        let onResolved = resolver.onResolved
        let decorators = resolver.decoratorsIfAny
        registry.lock.unlock()
        if let box = context.graphInstance(resolver.index) {
            // Kept by index, which names this registration, whose service type is `Service`.
            return resolver.instance(in: box)
        }
        // The callback shares the graph that the factory's resolves made.
        if onResolved != nil { context.holdGraph() }
        defer { if onResolved != nil { context.releaseGraph() } }
        // A `.graph` instance is never disposed, nor are its layers.
        var layers: [InstanceDisposal]?
        let instance = try make(
            resolver, arguments, in: self, decorators: decorators, onResolved: nil, context: context, layers: &layers)
        context.keepGraphInstance(resolver.cached(instance), index: resolver.index)
        if let onResolved {
            do {
                try context.enter(resolver)
                defer { context.leave() }
                try runCallback(onResolved, self, instance, of: resolver, context: context)
            } catch {
                context.dropGraphInstance(resolver.index)
                throw error
            }
        }
        // Resolved outermost: the graph ends with this call.
        if context.depth == 0 { context.endGraph() }
        return instance
    }

    /// Returns the slot's instance, waits for the thread making it, or makes it: exactly once per slot.
    /// Call with the lock held; returns with it released.
    func resolve<Service, Args>(
        _ slot: Slot,
        of resolver: ServiceResolver<Service, Args>,
        _ arguments: Args,
        owner: Scope,
        publishes: Bool,
        memoIn memo: Scope?,
        memoIndex: Int
    ) throws(ResolutionError) -> Service {
        var retiredWeakBox: AnyObject?
        // Every way out has released the lock; lock-free readers may still hold the retired box's address.
        defer { if let box = retiredWeakBox.take() { Reclamation.retire(box) } }
        while true {
            if owner.isDisposedValue {
                registry.lock.unlock()
                throw failure(.scopeDisposed, resolver.serviceKey, scopeKey: owner.key)
            }
            switch slot.state {
            case .created(let box):
                do throws(DeadInstance) {
                    let instance = try liveInstance(in: box, of: resolver)
                    memo?.publishBelowOwner(slot, box: box, index: memoIndex)
                    registry.lock.unlock()
                    return instance
                } catch {
                    // A `.weak` instance nobody holds any more: unpublish its box, release it once the
                    // readers are done with it, and make the next one.
                    if publishes { resolver.rootWord.publish(nil) }
                    retiredWeakBox = box
                    slot.state = .empty
                    continue
                }
            case .initializing(let box, let owner) where owner === ResolutionContext.current:
                // Its `resolved` callback is running on this thread and resolves it again: it is cached
                // (and held by the creation, so a weak one is alive).
                do throws(DeadInstance) {
                    let instance = try liveInstance(in: box, of: resolver)
                    registry.lock.unlock()
                    return instance
                } catch {
                    registry.lock.unlock()
                    throw failure(.dependencyCycle, resolver.serviceKey)
                }
            case .creatingAsync(let creation):
                // Its `resolved` callback, running on this thread, resolves it again: it is cached. Any other
                // synchronous resolve must not block a thread on an async creation: it must await it.
                if let box = creation.box, creation.callbackContext === ResolutionContext.current {
                    do throws(DeadInstance) {
                        let instance = try liveInstance(in: box, of: resolver)
                        registry.lock.unlock()
                        return instance
                    } catch {}
                }
                registry.lock.unlock()
                throw requiresAwait(resolver)
            case .creating, .initializing:
                // Another thread is making it (or this one, which the wait reports as a cycle).
                let flight = slot.flight(of: resolver)
                registry.lock.unlock()
                if let flight {
                    // An `await` resolve's attempt: its task suspends on the flight instead (`resolveAwaiting`).
                    if ResolutionContext.servesAwait { throw requiresAwait(resolver) }
                    try ResolutionContext.current.wait(
                        for: flight, requested: resolver.serviceKey, limit: registry.waitLimit)
                }
                registry.lock.lock()
            case .empty:
                guard !resolver.requiresAwaitHere else {
                    registry.lock.unlock()
                    throw requiresAwait(resolver)
                }
                let context = ResolutionContext.current
                slot.state = .creating(context)
                let onResolved = resolver.onResolved
                let onDispose = resolver.onDispose
                let decorators = resolver.decoratorsIfAny
                registry.lock.unlock()
                return try make(
                    resolver, arguments, in: owner, into: slot, decorators: decorators, onResolved: onResolved,
                    onDispose: onDispose, context: context, publishes: publishes)
            }
        }
    }

    /// Runs the factory of a reused service, caches the instance, then runs its `resolved` callback.
    /// Called with the lock released and the slot marked as being created by this thread; every way out
    /// settles the slot and finishes the flight of any thread waiting for it.
    private func make<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>,
        _ arguments: Args,
        in owner: Scope,
        into slot: Slot,
        decorators: [Decorator<Service>]?,
        onResolved: (@Sendable (Scope, Service) throws -> Void)?,
        onDispose: DisposeHook<Service>?,
        context: ResolutionContext,
        publishes: Bool
    ) throws(ResolutionError) -> Service {
        // The callback shares the graph that the factory's resolves made.
        if onResolved != nil { context.holdGraph() }
        defer { if onResolved != nil { context.releaseGraph() } }
        let instance: Service
        var layers: [InstanceDisposal]?
        do {
            instance = try make(
                resolver, arguments, in: owner, decorators: decorators, onResolved: nil, context: context, layers: &layers)
        } catch {
            registry.lock.withLock { slot.settle(.empty) }?.finish(failing: error)
            throw error
        }
        guard let (box, record) = cacheEntry(for: instance, layers: layers, of: resolver, slot: slot, onDispose: onDispose) else {
            let error = failure(.weakValueType, resolver.serviceKey)
            registry.lock.withLock { slot.settle(.empty) }?.finish(failing: error)
            throw error
        }
        registry.lock.lock()
        guard !owner.isDisposedValue else {
            let flight = slot.settle(.empty)
            registry.lock.unlock()
            flight?.finish()
            try? record?.dispose()
            throw failure(.scopeDisposed, resolver.serviceKey, scopeKey: owner.key)
        }
        if let record { owner.disposals.append(record) }
        guard let onResolved else {
            let flight = owner.store(box, in: slot, of: resolver, publishes: publishes)
            registry.lock.unlock()
            flight?.finish()
            return instance
        }
        slot.state = .initializing(box, context)
        registry.lock.unlock()
        // Cached first, so that whatever the callback resolves can get back to this instance.
        do {
            try context.enter(resolver)
            defer { context.leave() }
            try runCallback(onResolved, owner, instance, of: resolver, context: context)
        } catch {
            // The record is this thread's to dispose only if it is still among the scope's: a disposal of the
            // scope during the callback took it, and disposes the instance itself.
            let (flight, isOurs): (InFlight?, Bool) = registry.lock.withLock {
                (slot.settle(.empty), owner.takeDisposal(for: slot))
            }
            flight?.finish(failing: error)
            if isOurs { try? record?.dispose() }
            throw error
        }
        registry.lock.lock()
        // Disposed while the callback ran (by it, or by another thread): the disposal has taken the
        // record and disposes the instance, which must not be handed out.
        let isDisposed = owner.isDisposedValue
        let flight = isDisposed ? slot.settle(.empty) : owner.store(box, in: slot, of: resolver, publishes: publishes)
        registry.lock.unlock()
        flight?.finish()
        if isDisposed { throw failure(.scopeDisposed, resolver.serviceKey, scopeKey: owner.key) }
        return instance
    }
}
