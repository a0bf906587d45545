import CStimpakAtomics

/// The synchronous locked path from a registration to its instance: the slot's states, and what this thread
/// does in each. The steps that do not block are the creation core's (Scope+Creation.swift).
extension Scope {
    /// Makes a transient, or finds the slot of a reused instance and resolves it.
    ///
    /// A registration made in a scope (`registeredIn`) caches with that scope in the root's place, and its
    /// instance is published at `localsIndex` in the resolving scope's table, where the `.provided` route reads.
    func resolveRegistered<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ arguments: Args, registeredIn: Scope? = nil, localsIndex: Int = 0,
        _ locked: consuming Locked
    ) throws(ResolutionError) -> Service {
        locked = try refuseCaptive(resolver, node: nil, locked)
        switch resolver.reuse.kind {
        case .transient:
            locked = try refuseAsyncFactory(resolver, locked)
            let context = ResolutionContext.current
            let onResolved = resolver.onResolved
            let decorators = resolver.decoratorsIfAny
            registry.lock.release(locked)
            // The callback, run once the factory has left the path, shares the graph that the factory's resolves made.
            if onResolved != nil { context.holdGraph() }
            defer { if onResolved != nil { context.releaseGraph() } }
            var layers: [InstanceDisposal]?
            let instance = try make(resolver, arguments, in: self, decorators: decorators, context: context, layers: &layers)
            return try handOut(transient: instance, layers: layers, of: resolver, onResolved: onResolved)
        case .graph:
            locked = try refuseAsyncFactory(resolver, locked)
            return try resolveGraph(resolver, arguments, locked)
        case .inScope where keepsInTable(resolver, registeredIn: registeredIn, locked):
            // This scope is the owner `cacheOwner` would find: no call, and no retain and release of it.
            return try resolveInTable(resolver, arguments, owner: self, locked)
        case .singleton, .weak, .inScope, .scopedTo:
            let owner = try cacheOwner(of: resolver, registeredIn: registeredIn, locked)
            locked = owner.locked
            if owner.value.keepsInTable(resolver, registeredIn: registeredIn, locked) {
                return try resolveInTable(resolver, arguments, owner: owner.value, locked)
            }
            if registeredIn == nil, resolver.hasAsyncFactory, let box = keptInstance(of: resolver, owner: owner.value, locked) {
                registry.lock.release(locked)
                return resolver.instance(in: box)
            }
            let place = try cachePlace(
                of: resolver, arguments, owner: owner.value, registeredIn: registeredIn, localsIndex: localsIndex, locked)
            locked = place.locked
            return try resolve(place.value, of: resolver, arguments, locked)
        }
    }

    /// Throws `requiresAwait`, with the lock released, when `resolver`'s factory is `async` (or must run on
    /// the main actor, and this is not it); `dependencyCycle` for a transient that the task's chain makes already
    /// (``isMadeByThisTask(_:)``), which awaiting would make again, without end.
    @inline(__always)
    private func refuseAsyncFactory<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ locked: consuming Locked
    ) throws(ResolutionError) -> Locked {
        guard resolver.requiresAwaitHere else { return locked }
        registry.lock.release(locked)
        if resolver.reuse.kind == .transient, Self.isMadeByThisTask(resolver) {
            throw failure(.dependencyCycle, resolver.serviceKey)
        }
        throw requiresAwait(resolver)
    }

    /// Whether this synchronous resolve of `registration` runs in its own creation, in the task whose chain makes
    /// it: from its `async` factory or a decorator (nothing on the thread's path), or from a main-actor factory that
    /// an `await` runs on this thread (its own node's registration alone on the path). A factory or callback of
    /// another service on the path is not counted: a `resolved` callback that gets `requiresAwait` is deferred
    /// until the instance it needs is made.
    static func isMadeByThisTask(_ registration: AnyObject) -> Bool {
        guard let node = AsyncNode.current, node.contains(registration) else { return false }
        return isOnlyItsOwnFactoryOnThePath(node)
    }

    /// Whether the thread's path is empty, or holds only `node`'s registration (a main-actor factory that an
    /// `await` runs on this thread).
    static func isOnlyItsOwnFactoryOnThePath(_ node: AsyncNode) -> Bool {
        let depth = stimpak_thread_get().pointee.depth
        return depth == 0 || (depth == 1 && ResolutionContext.current.outermostRegistration === node.registration)
    }

    /// Returns the `.graph` instance this outermost resolution already made, or makes it and keeps it for
    /// the rest of the resolution (before its `resolved` callback runs, so that the callback can close a
    /// cycle through it).
    private func resolveGraph<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ arguments: Args, _ locked: consuming Locked
    ) throws(ResolutionError) -> Service {
        let context = ResolutionContext.current
        let onResolved = resolver.onResolved
        let decorators = resolver.decoratorsIfAny
        registry.lock.release(locked)
        if let box = context.graphInstance(resolver.index) {
            // Kept by index, which names this registration, whose service type is `Service`.
            return resolver.instance(in: box)
        }
        // The callback shares the graph that the factory's resolves made.
        if onResolved != nil { context.holdGraph() }
        defer { if onResolved != nil { context.releaseGraph() } }
        // A `.graph` instance is never disposed, nor are its layers.
        var layers: [InstanceDisposal]?
        let instance = try make(resolver, arguments, in: self, decorators: decorators, context: context, layers: &layers)
        context.keepGraphInstance(resolver.cached(instance), index: resolver.index)
        if let onResolved {
            do {
                try runCallback(onResolved, of: resolver, self, instance, context: context)
            } catch  where defersCallback(after: error, context: context) {
                // Kept in the graph; its callback runs again when the outermost resolve ends.
                context.deferCallback { () throws(ResolutionError) in
                    try self.runCallback(onResolved, of: resolver, self, instance, context: context)
                }
            } catch {
                context.dropGraphInstance(resolver.index)
                throw error
            }
        }
        // Made: the callbacks deferred while it was being made can find it now, in the graph.
        try ResolutionContext.endLockedPathResolve(failing: false)
        // Resolved outermost: the graph ends with this call.
        if context.depth == 0 { context.endGraph() }
        return instance
    }

    /// Returns the instance of `place`'s slot, waits for the thread making it, or makes it: exactly once per
    /// slot.
    func resolve<Service, Args>(
        _ place: CachePlace, of resolver: ServiceResolver<Service, Args>, _ arguments: Args,
        _ locked: consuming Locked
    ) throws(ResolutionError) -> Service {
        let slot = place.slot
        while true {
            locked = try refuseDisposed(place.owner, of: resolver, locked)
            switch slot.state {
            case .created(let box):
                do throws(DeadInstance) {
                    return try createdInstance(box, at: place, of: resolver, locked)
                } catch {
                    // Dead: the slot is empty for the next creation.
                    locked = registry.lock.acquire()
                }
            case .initializing(let box, let owner) where owner === ResolutionContext.current:
                // Its `resolved` callback is running on this thread and resolves it again: it is cached
                // (and held by the creation, so a weak one is alive).
                do throws(DeadInstance) {
                    let instance = try liveInstance(in: box, of: resolver)
                    registry.lock.release(locked)
                    return instance
                } catch {
                    registry.lock.release(locked)
                    throw failure(.dependencyCycle, resolver.serviceKey)
                }
            case .creatingAsync(let creation):
                // Its `resolved` callback, running on this thread, resolves it again: it is cached. Any other
                // synchronous resolve must not block a thread on an async creation: it must await it.
                if let box = creation.box, creation.callbackContext === ResolutionContext.current {
                    do throws(DeadInstance) {
                        let instance = try liveInstance(in: box, of: resolver)
                        registry.lock.release(locked)
                        return instance
                    } catch {}
                }
                registry.lock.release(locked)
                // Resolved again by its own creation, in the task whose chain makes it: from its `async` factory
                // or a decorator (nothing on the thread's path), or from a main-actor factory that an `await` runs on
                // this thread (its own node's registration alone on the path). A cycle, which awaiting would turn
                // into a wait for itself; reported with the chain's path and no reuse, so never deferred. A factory
                // or callback of another service on the path gets `requiresAwait`: a `resolved` callback is then
                // deferred until the instance is made.
                if let node = AsyncNode.current, node.isMaking(creation), Self.isOnlyItsOwnFactoryOnThePath(node) {
                    throw failure(.dependencyCycle, resolver.serviceKey)
                }
                throw requiresAwait(resolver)
            case .creating, .initializing:
                // Another thread is making it (or this one, which the wait reports as a cycle).
                let flight = slot.flight(of: resolver, locked)
                registry.lock.release(locked)
                if let flight {
                    // An `await` resolve's attempt: its task suspends on the flight instead (`resolveAwaiting`).
                    if ResolutionContext.servesAwait { throw requiresAwait(resolver) }
                    try ResolutionContext.current.wait(
                        for: flight, requested: resolver.serviceKey, limit: registry.waitLimit)
                }
                locked = registry.lock.acquire()
            case .empty:
                if resolver.requiresAwaitHere {
                    // An `await` resolve's attempt goes on from this slot (`resolveAwaiting(from:)`).
                    let generation = registry.generation
                    registry.lock.release(locked)
                    throw requiresAwait(resolver, at: place, generation: generation)
                }
                let context = ResolutionContext.current
                slot.state = .creating(context)
                let onResolved = resolver.onResolved
                let onDispose = resolver.onDispose
                let decorators = resolver.decoratorsIfAny
                registry.lock.release(locked)
                return try make(
                    resolver, arguments, at: place, context: context, decorators: decorators, onResolved: onResolved,
                    onDispose: onDispose)
            }
        }
    }

    /// Runs the factory of a reused service on this thread, then commits the instance
    /// (``commit(_:layers:of:at:by:onResolved:onDispose:)``). Call without the lock, with the slot `.creating`
    /// on this thread (`context`); every way out settles the slot and finishes the flight of any
    /// thread waiting for it.
    private func make<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>,
        _ arguments: Args,
        at place: CachePlace,
        context: ResolutionContext,
        decorators: [Decorator<Service>]?,
        onResolved: (@Sendable (Scope, Service) throws -> Void)?,
        onDispose: DisposeHook<Service>?
    ) throws(ResolutionError) -> Service {
        // The callback shares the graph that the factory's resolves made.
        if onResolved != nil { context.holdGraph() }
        defer { if onResolved != nil { context.releaseGraph() } }
        let instance: Service
        var layers: [InstanceDisposal]?
        do {
            instance = try make(resolver, arguments, in: place.owner, decorators: decorators, context: context, layers: &layers)
        } catch {
            place.owner.abandon(.slot(place.slot, .thread(context)), failing: error)
            throw error
        }
        return try commit(
            instance, layers: layers, of: resolver, at: place, by: .thread(context), onResolved: onResolved,
            onDispose: onDispose)
    }
}
