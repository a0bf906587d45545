/// The `async` resolve path: what an `await scope.require(…)` does once the synchronous path (cached
/// instances, synchronous factories) has said that the service's factory is `async`. See ARCHITECTURE.md.
extension Scope {
    /// Finds or makes the instance registered for (`Service`, `Args`, `key`), awaiting an `async` factory.
    ///
    /// The synchronous path runs first (one call, ``resolveInstanceNotInlined(_:_:key:)``), so a cached instance or
    /// a synchronous service costs about what it costs there, without a suspension; only a registration whose
    /// factory is `async` (and not cached yet), or a creation to wait for, goes on to
    /// ``resolveAwaiting(_:_:key:after:from:)``, from the slot that attempt handed over, if any. The unkeyed and the
    /// typed-key forms below go from their lock-free lookup straight to ``resolveUncreatedAwaiting(_:_:generation:)``.
    ///
    /// The three forms read the awaitable error in place: a helper for it, out of line or inlined, changes how the
    /// optimizer inlines the form into its caller, and an `await` of a cached instance then costs an async frame
    /// and two executor checks more (`StimpakComparison --instructions`, `async-singleton`, shows it).
    @inlinable @inline(__always)
    func resolveInstanceAsync<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?
    ) async throws -> Service {
        let awaiting: AwaitingCallback?
        let place: AwaitablePlace?
        do throws(ResolutionError) {
            return try resolveInstanceNotInlined(Service.self, arguments, key: key)
        } catch {
            guard error.code == .requiresAwait, error.isAwaitableHere else { throw error }
            (awaiting, place) = (error.awaitingCallback, error.handsOverPlace ? ResolutionContext.takeHandedPlace() : nil)
        }
        return try await resolveAwaiting(Service.self, arguments, key: key, after: awaiting, from: place)
    }

    /// The same without a key: the synchronous path is the unkeyed one, one call to its specialization, which
    /// hands an `async` registration's uncreated instance straight to ``resolveUncreatedAwaiting(_:_:generation:)``.
    @inlinable @inline(__always)
    func resolveInstanceAsync<Service, Args>(_ type: Service.Type, _ arguments: Args) async throws -> Service {
        let awaiting: AwaitingCallback?
        let place: AwaitablePlace?
        var uncreated: Unmanaged<ServiceResolver<Service, Args>>?
        var generation = 0
        do throws(ResolutionError) {
            if let instance = try resolveInstanceServingAwait(
                Service.self, arguments, uncreated: &uncreated, generation: &generation)
            {
                return instance
            }
            (awaiting, place) = (nil, nil)
        } catch {
            guard error.code == .requiresAwait, error.isAwaitableHere else { throw error }
            (awaiting, place) = (error.awaitingCallback, error.handsOverPlace ? ResolutionContext.takeHandedPlace() : nil)
        }
        if let uncreated {
            return try await resolveUncreatedAwaiting(uncreated.takeRetainedValue(), arguments, generation: generation)
        }
        return try await resolveAwaiting(Service.self, arguments, key: nil, after: awaiting, from: place)
    }

    /// An `async` registration whose instance the lock-free path found not made yet, in the table of
    /// `generation`: its empty slot claimed (``claimUncreated(_:_:generation:otherwise:)``) and its factory awaited;
    /// or, when another task is making it (or made it meanwhile), that slot resolved as the locked path resolves
    /// it; or, when the registrations changed since, the scope was disposed or an observer watches, the service
    /// looked up again.
    ///
    /// Inlined into the caller, so that it is specialized: an unspecialized `async` function allocates each of its
    /// values of `Service` and `Args` from the task's allocator, and the generic form of `withValue` its frames.
    /// Always inlined: a frame of its own costs a task-allocator block and an executor check at its entry, and
    /// makes the caller's frame larger even when the instance is cached. What does not suspend (the claim, the
    /// decorators, the commit) is a synchronous call.
    @inlinable @inline(__always)
    func resolveUncreatedAwaiting<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ arguments: Args, generation: Int
    ) async throws -> Service {
        var found: AwaitablePlace?
        guard let claim = try claimUncreated(resolver, arguments, generation: generation, otherwise: &found) else {
            return try await resolveAwaiting(Service.self, arguments, key: resolver.serviceKey.key, from: found)
        }
        return try await make(
            resolver, claim.factory, arguments, claimed: claim.slot, decorators: claim.decorators,
            onResolved: claim.onResolved, onDispose: claim.onDispose)
    }

    /// Runs the factory of a claimed slot's registration, and its decorators, with the registration on this task's
    /// path (its node bound as a task-local value), then keeps the instance (``commit(_:layers:of:claimed:onResolved:onDispose:)``), or
    /// abandons the creation (``SlotClaim/abandon(failing:)``). In line: specialized in the caller of
    /// ``resolveUncreatedAwaiting(_:_:generation:)``, and in the frames of the locked path that make an instance
    /// in an empty slot, which hold no value of a generic type besides the instance.
    ///
    /// The binding runs on the generic executor (`isolation: nil`), where each caller is: the `async` API is
    /// `nonisolated`, and the functions between it and this one run on their caller's executor. The factory is a
    /// `nonisolated` closure, which runs there whatever the binding's isolation; declared with the caller's,
    /// the binding would check the executor at each step.
    @inlinable @inline(__always)
    nonisolated(nonsending) func make<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ factory: @escaping (Scope, Args) async throws -> Service,
        _ arguments: Args, claimed claim: SlotClaim, decorators: [Decorator<Service>]?,
        onResolved: (@Sendable (Scope, Service) throws -> Void)?, onDispose: DisposeHook<Service>?
    ) async throws -> Service {
        let instance: Service
        var layers: [InstanceDisposal]?
        do {
            // The decorators run with the node bound too, as a synchronous creation's run on its path.
            let owner = claim.owner
            instance = try await AsyncNode.innermostBinding.withValue(
                claim.node,
                operation: {
                    try decorated(
                        try await factory(owner, arguments), of: resolver, decorators: decorators, claimed: claim,
                        layers: &layers)
                }, isolation: nil)
        } catch {
            throw claim.abandon(failing: error)
        }
        let callbacks = try commit(
            instance, layers: layers, of: resolver, claimed: claim, onResolved: onResolved, onDispose: onDispose)
        if !callbacks.isEmpty { try await AwaitingCallback.callAgain(callbacks) }
        return instance
    }

    /// Claims the empty slot of `resolver`'s instance for an `async` creation by this task
    /// (``claim(_:of:parent:_:)``), or, for an instance this request scope keeps in its table as it is, the empty
    /// table entry (``claimTableEntry(of:parent:_:)``), with what the creation needs read under the lock: the
    /// factory, the decorators and the callbacks. Nil, with the lock released, when the registrations changed since
    /// `generation`, the scope was disposed or an observer watches, or the owner's table holds the instance (the
    /// caller looks the service up again), or when the slot is not empty (another task's mark made a slot) or its
    /// owner is disposed: then `found` is the slot, which the caller resolves from. Throws, with the
    /// lock released, what the captive check, the owner's and the slot's lookup, or the claim throws.
    @usableFromInline
    func claimUncreated<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ arguments: Args, generation: Int,
        otherwise found: inout AwaitablePlace?
    ) throws(ResolutionError) -> UncreatedClaim<Service, Args>? {
        var locked = registry.lock.acquire()
        guard isUnchanged(since: generation, locked), resolver.reuse.kind != .transient, resolver.reuse.kind != .graph, let factory = resolver.asyncFactory
        else {
            registry.lock.release(locked)
            return nil
        }
        // A reused registration's (the lock-free path publishes no other's instance): as `resolveReused` does.
        let parent = AsyncNode.current
        locked = try refuseCaptive(resolver, node: parent, locked)
        let owner = try cacheOwner(of: resolver, registeredIn: nil, locked)
        locked = owner.locked
        if owner.value.keepsInTableAwaiting(resolver, locked) {
            guard isUnchanged(since: generation, locked) else {
                registry.lock.release(locked)
                return nil
            }
            // A request scope's own instance, not made yet: its table entry is marked with the creation's node, as a
            // synchronous creation marks it with its thread's context (no slot unless another resolve needs one).
            if owner.value === self, cache(for: resolver.index, locked) == nil {
                let (decorators, onDispose) = (resolver.decoratorsIfAny, resolver.onDispose)
                return UncreatedClaim(
                    slot: try claimTableEntry(of: resolver, parent: parent, locked), factory: factory,
                    decorators: decorators, onResolved: nil, onDispose: onDispose)
            }
            // Made meanwhile, and kept in the owner's table (published below it now): the caller's lookup serves it
            // as it is. A mark, or a slot, is resolved from the slot below (a mark made one).
            if keptInstance(of: resolver, owner: owner.value, locked) != nil {
                registry.lock.release(locked)
                return nil
            }
        }
        let held = try cachePlace(
            of: resolver, arguments, owner: owner.value, registeredIn: nil, localsIndex: 0, locked)
        locked = held.locked
        let place = held.value
        // Checked again: finding a `.scopedTo` owner, or a slot by a comparator, releases the lock meanwhile.
        guard isUnchanged(since: generation, locked) else {
            registry.lock.release(locked)
            return nil
        }
        guard case .empty = place.slot.state, !place.owner.isDisposedValue else {
            found = AwaitablePlace(
                registration: resolver, types: (ObjectIdentifier(Service.self), ObjectIdentifier(Args.self)),
                place: place, generation: generation)
            registry.lock.release(locked)
            return nil
        }
        let (decorators, onResolved, onDispose) = (resolver.decoratorsIfAny, resolver.onResolved, resolver.onDispose)
        return UncreatedClaim(
            slot: try claim(place, of: resolver, parent: parent, locked), factory: factory, decorators: decorators,
            onResolved: onResolved, onDispose: onDispose)
    }

    /// Whether what the lock-free path found in the table of `generation` still holds for a creation from it: this
    /// scope open, no registration changed since, no observer to tell of the resolve.
    @inline(__always)
    private func isUnchanged(since generation: Int, _ locked: borrowing Locked) -> Bool {
        !isDisposedValue && registry.generation == generation && registry.observedWord.loadRelaxed() == 0
    }

    /// Marks the empty slot at `place` with a new creation by this task, and releases the lock: the claim that the
    /// creation ends (``make(_:_:_:claimed:decorators:onResolved:onDispose:)``). Throws, with the lock released,
    /// when `parent`'s chain makes the registration already (a cycle) or is too deep, before the slot is marked,
    /// so that no other task waits for a creation that cannot start. In line, in each caller.
    @inline(__always)
    func claim<Service, Args>(
        _ place: CachePlace, of resolver: ServiceResolver<Service, Args>, parent: AsyncNode?,
        _ locked: consuming Locked
    ) throws(ResolutionError) -> SlotClaim {
        locked = try refuseEntering(resolver, below: parent, locked)
        // The node is the creation that marks the slot.
        let node = AsyncNode(registration: resolver, scope: place.owner, isOwnCreation: true, parent: parent)
        place.slot.state = .creatingAsync(node)
        let claim = SlotClaim(node: node, marked: .slot(place), start: creationStart())
        registry.lock.release(locked)
        return claim
    }

    /// Marks this child scope's empty table entry of `resolver`'s instance with a new creation by this task (its
    /// node), and releases the lock: the claim that the creation ends. A resolve that finds the mark makes a slot of
    /// it (``inflatedSlot(_:of:_:)``), which waits for the creation, and which the creation settles. Throws as
    /// ``claim(_:of:parent:_:)`` does, before the entry is marked.
    private func claimTableEntry<Service, Args>(
        of resolver: ServiceResolver<Service, Args>, parent: AsyncNode?, _ locked: consuming Locked
    ) throws(ResolutionError) -> SlotClaim {
        locked = try refuseEntering(resolver, below: parent, locked)
        let node = AsyncNode(registration: resolver, scope: self, isOwnCreation: true, parent: parent)
        setCache(node, for: resolver.index, locked)
        let claim = SlotClaim(node: node, marked: .tableEntry(self, resolver.index), start: creationStart())
        registry.lock.release(locked)
        return claim
    }

    /// Throws, with the lock released, when `parent`'s chain makes `resolver` already (a cycle) or is too deep.
    @inline(__always)
    private func refuseEntering<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, below parent: AsyncNode?, _ locked: consuming Locked
    ) throws(ResolutionError) -> Locked {
        guard let parent else { return locked }
        let code: ResolutionError.Code? =
            parent.contains(resolver)
            ? .dependencyCycle : parent.depth >= ResolutionError.maximumDepth ? .resolutionTooDeep : nil
        guard let code else { return locked }
        registry.lock.release(locked)
        throw AsyncNode.pathError(code, resolver.serviceKey, node: parent)
    }

    /// The factory's instance wrapped by the registration's decorators; the layers under the outermost that dispose
    /// themselves go to `layers`. Ends the creation's node, which the caller's ``SlotClaim/abandon(failing:)`` ends
    /// when this throws.
    @usableFromInline
    func decorated<Service, Args>(
        _ made: Service, of resolver: ServiceResolver<Service, Args>, decorators: [Decorator<Service>]?,
        claimed claim: SlotClaim, layers: inout [InstanceDisposal]?
    ) throws -> Service {
        var instance = made
        if let decorators {
            instance = try Self.decorate(made, of: resolver, with: decorators, in: claim.owner, layers: &layers)
        }
        claim.node.finish()
        return instance
    }

    /// Reports the creation to the observer, keeps and publishes the claimed slot's instance
    /// (``commit(_:layers:of:at:by:onResolved:onDispose:)``, which settles the slot whatever happens) and returns the
    /// callbacks that waited for it, for the caller to run; on a failure, drops them.
    @usableFromInline
    func commit<Service, Args>(
        _ instance: Service, layers: [InstanceDisposal]?, of resolver: ServiceResolver<Service, Args>,
        claimed claim: SlotClaim, onResolved: (@Sendable (Scope, Service) throws -> Void)?,
        onDispose: DisposeHook<Service>?
    ) throws(ResolutionError) -> [AwaitingCallback] {
        // Outside the node's binding, as a transient's creation is reported.
        claim.owner.reportCreation(of: resolver, since: claim.start)
        let creation = claim.node
        do {
            switch claim.marked {
            case .slot(let place):
                _ = try place.owner.commit(
                    instance, layers: layers, of: resolver, at: place, by: .task(creation), onResolved: onResolved,
                    onDispose: onDispose)
            case .tableEntry(let owner, let index):
                try owner.keep(made: instance, layers: layers, of: resolver, at: index, by: creation, onDispose: onDispose)
            }
        } catch {
            _ = creation.takeCallbacks()
            throw error
        }
        return creation.takeCallbacks()
    }

    /// ``resolveInstanceAsync(_:_:key:)`` with a key of a concrete type.
    @inlinable @inline(__always)
    func resolveInstanceAsync<Service, Args, Key: Hashable>(
        _ type: Service.Type, _ arguments: Args, typedKey key: Key
    ) async throws -> Service {
        let awaiting: AwaitingCallback?
        let place: AwaitablePlace?
        var uncreated: Unmanaged<ServiceResolver<Service, Args>>?
        var generation = 0
        do throws(ResolutionError) {
            if let instance = try resolveInstanceServingAwait(
                Service.self, arguments, typedKey: key, uncreated: &uncreated, generation: &generation)
            {
                return instance
            }
            (awaiting, place) = (nil, nil)
        } catch {
            guard error.code == .requiresAwait, error.isAwaitableHere else { throw error }
            (awaiting, place) = (error.awaitingCallback, error.handsOverPlace ? ResolutionContext.takeHandedPlace() : nil)
        }
        if let uncreated {
            return try await resolveUncreatedAwaiting(uncreated.takeRetainedValue(), arguments, generation: generation)
        }
        return try await resolveAwaiting(
            Service.self, arguments, key: Scope.erased(key), after: awaiting, from: place)
    }

    /// The locked lookup for an `async` resolve, then the registration's creation, awaited. A synchronous
    /// registration comes here when another thread is making its instance: the task suspends until that
    /// creation finishes, then resolves it as the synchronous path does. When the synchronous attempt made the
    /// instance but its `resolved` callback waits for an instance only an `await` can get (`awaiting`), that
    /// callback runs again first. When it found the empty slot of an `async` factory (`place`), the creation
    /// starts from that slot, unless a registration changed since.
    @usableFromInline
    func resolveAwaiting<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?, after awaiting: AwaitingCallback? = nil,
        from place: AwaitablePlace? = nil
    ) async throws -> Service {
        if let awaiting { try await awaiting.callAgainWhenAwaited() }
        if let place, place.types == (ObjectIdentifier(Service.self), ObjectIdentifier(Args.self)),
            registry.observedWord.loadRelaxed() == 0
        {
            // Found by the synchronous attempt for this `Service` and `Args`.
            let resolver = unsafeDowncast(place.registration, to: ServiceResolver<Service, Args>.self)
            if let factory = resolver.asyncFactory {
                var locked = registry.lock.acquire()
                // This scope disposed meanwhile: the lookup below says so.
                if registry.generation == place.generation, !isDisposedValue {
                    // As `resolveRegistered` goes on once it has the slot.
                    let node = AsyncNode.current
                    locked = try refuseCaptive(resolver, node: node, locked)
                    return try await resolve(place.place, of: resolver, factory, arguments, node: node, locked)
                }
                registry.lock.release(locked)
            }
        }
        // An implicit wrapper (an array of every registration), unless something is registered or provided as
        // it: made awaiting what it wraps.
        if let wrapper = Self.implicitWrapper(Service.self, Args.self),
            !findsRegistrationOrValue(Service.self, Args.self, key: key)
        {
            return try await wrapper.implicitInstanceAwaiting(from: self, key: key) as! Service
        }
        while true {
            let lookup = try lockAndFind(Service.self, arguments, key: key)
            switch consume lookup {
            case .resolved(let value):
                return Self.service(value, as: Service.self)
            case .registration(let found, let locked):
                let resolver = found.resolver
                let registeredIn = found.registeredIn
                let localsIndex = found.localsIndex
                if let factory = resolver.asyncFactory {
                    guard registry.observedWord.loadRelaxed() != 0 else {
                        return try await resolveRegistered(
                            resolver, factory, arguments, registeredIn: registeredIn, localsIndex: localsIndex, locked)
                    }
                    // The synchronous attempt left this resolve to the observer of the `await`.
                    let requested = ServiceKey(service: Service.self, arguments: Args.self, key: key)
                    return try await resolveAwaitingObserved(requested, locked) { locked in
                        try await resolveRegistered(
                            resolver, factory, arguments, registeredIn: registeredIn, localsIndex: localsIndex, locked)
                    }
                }
                if let flight = try synchronousCreation(
                    of: resolver, arguments, registeredIn: registeredIn, localsIndex: localsIndex, locked)
                {
                    try await awaitCreation(flight, requested: resolver.serviceKey, node: AsyncNode.current)
                    continue
                }
                do throws(ResolutionError) {
                    return try resolveInstanceNotInlined(Service.self, arguments, key: key)
                } catch {
                    // Another thread started making it meanwhile: await that creation.
                    guard error.code == .requiresAwait, error.isAwaitableHere else { throw error }
                    // A slot handed over (registered `async` meanwhile) is dropped: the next turn looks it up again.
                    _ = ResolutionContext.takeHandedPlace()
                    if let awaiting = error.awaitingCallback { try await awaiting.callAgainWhenAwaited() }
                }
            }
        }
    }

    /// The creation of `resolver`'s instance for `arguments` that another thread runs synchronously, if any, for
    /// an `await` resolve to suspend on.
    private func synchronousCreation<Service, Args>(
        of resolver: ServiceResolver<Service, Args>, _ arguments: Args, registeredIn: Scope?, localsIndex: Int,
        _ locked: consuming Locked
    ) throws(ResolutionError) -> InFlight? {
        switch resolver.reuse.kind {
        case .transient, .graph:
            registry.lock.release(locked)
            return nil
        case .singleton, .weak, .inScope, .scopedTo:
            break
        }
        let owner = try cacheOwner(of: resolver, registeredIn: registeredIn, locked)
        locked = owner.locked
        // A scope's table entry that another thread marks becomes a slot being made by that thread.
        let place = try cachePlace(
            of: resolver, arguments, owner: owner.value, registeredIn: registeredIn, localsIndex: localsIndex, locked)
        locked = place.locked
        let slot = place.value.slot
        let flight: InFlight?
        switch slot.state {
        case .creating, .initializing:
            flight = slot.flight(of: resolver, locked)
        case .empty, .created, .creatingAsync:
            flight = nil
        }
        registry.lock.release(locked)
        return flight
    }

    /// Suspends until another thread's synchronous creation finishes (no thread blocks), the task is cancelled or
    /// the container's ``WaitLimit`` passes; throws the error the creation failed with. Call without the lock.
    private nonisolated(nonsending) func awaitCreation(_ flight: InFlight, requested: ServiceKey, node: AsyncNode?) async throws {
        let limit = registry.waitLimit
        switch await flight.tasks.wait(limit: limit) {
        case .finished:
            if let failure = flight.finishedFailure { throw failure }
        case .cancelled:
            throw CancellationError()
        case .timedOut:
            var error = AsyncNode.pathError(.waitTimedOut, requested, node: node)
            error.waitLimit = limit
            throw error
        }
    }

    /// Makes a transient or `.graph` instance, or awaits the cached one's creation.
    private nonisolated(nonsending) func resolveRegistered<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ factory: @escaping (Scope, Args) async throws -> Service,
        _ arguments: Args, registeredIn: Scope?, localsIndex: Int, _ locked: consuming Locked
    ) async throws -> Service {
        let node = AsyncNode.current
        locked = try refuseCaptive(resolver, node: node, locked)
        switch resolver.reuse.kind {
        case .transient:
            let onResolved = resolver.onResolved
            let decorators = resolver.decoratorsIfAny
            registry.lock.release(locked)
            var layers: [InstanceDisposal]?
            let instance = try await make(
                resolver, factory, arguments, in: self, graphCreation: nil, node: node, decorators: decorators, layers: &layers)
            return try handOut(transient: instance, layers: layers, of: resolver, onResolved: onResolved)
        case .graph:
            let onResolved = resolver.onResolved
            let decorators = resolver.decoratorsIfAny
            registry.lock.release(locked)
            let instance: Service
            if let node {
                instance = try await graphInstance(of: resolver, factory, arguments, node: node, decorators: decorators)
            } else {
                // Resolved outermost: the graph begins with its factory's chain. A `.graph` instance is never
                // disposed, nor are its layers.
                var layers: [InstanceDisposal]?
                instance = try await make(
                    resolver, factory, arguments, in: self, graphCreation: nil, node: nil, decorators: decorators,
                    layers: &layers)
            }
            if let onResolved { try runCallback(onResolved, of: resolver, self, instance, context: .current) }
            return instance
        case .singleton, .weak, .inScope, .scopedTo:
            return try await resolveReused(
                resolver, factory, arguments, registeredIn: registeredIn, localsIndex: localsIndex, node: node, locked)
        }
    }

    /// A reused registration's instance: its owner and slot, then the instance made there (an empty slot in an
    /// open scope, mostly, since the lock-free path found none: made in line, without `resolve(_:of:_:_:node:_:)`'s
    /// frame), or that loop for a slot being made, made, or in a disposed scope. In line: each `async` function
    /// allocates its values of `Service` and `Args` from the task's allocator.
    @inline(__always)
    private nonisolated(nonsending) func resolveReused<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ factory: @escaping (Scope, Args) async throws -> Service,
        _ arguments: Args, registeredIn: Scope?, localsIndex: Int, node: AsyncNode?, _ locked: consuming Locked
    ) async throws -> Service {
        let owner = try cacheOwner(of: resolver, registeredIn: registeredIn, locked)
        locked = owner.locked
        if registeredIn == nil, let box = keptInstance(of: resolver, owner: owner.value, locked) {
            registry.lock.release(locked)
            return resolver.instance(in: box)
        }
        let place = try cachePlace(
            of: resolver, arguments, owner: owner.value, registeredIn: registeredIn, localsIndex: localsIndex, locked)
        locked = place.locked
        guard case .empty = place.value.slot.state, !place.value.owner.isDisposedValue else {
            return try await resolve(place.value, of: resolver, factory, arguments, node: node, locked)
        }
        return try await makeInEmptySlot(place.value, of: resolver, factory, arguments, node: node, locked)
    }

    /// The `.graph` instance of the outermost async resolve that `node`'s chain belongs to, made once for the
    /// whole chain and its child tasks: the first task makes it, the others await that creation (a cycle, as
    /// for a reused instance, when the waiting chain makes it). Call without the lock.
    private nonisolated(nonsending) func graphInstance<Service, Args>(
        of resolver: ServiceResolver<Service, Args>, _ factory: @escaping (Scope, Args) async throws -> Service,
        _ arguments: Args, node: AsyncNode, decorators: [Decorator<Service>]?
    ) async throws -> Service {
        while true {
            switch node.graph.claim(resolver.index, resolver.serviceKey) {
            case .made(let box):
                // Kept by index, which names this registration, whose service type is `Service`.
                return resolver.instance(in: box)
            case .claimed(let creation):
                let instance: Service
                var layers: [InstanceDisposal]?
                do {
                    instance = try await make(
                        resolver, factory, arguments, in: self, graphCreation: creation, node: node, decorators: decorators,
                        layers: &layers)
                } catch {
                    let waiters = registry.lock.withLock { locked in
                        creation.finish(failing: error is CancellationError ? nil : error, locked)
                    }
                    node.graph.settle(resolver.index, nil)
                    waiters?.finish()
                    throw error
                }
                node.graph.settle(resolver.index, resolver.cached(instance))
                registry.lock.withLock { locked in creation.finish(failing: nil, locked) }?.finish()
                return instance
            case .making(let creation):
                if node.isMaking(creation) || !AsyncCreation.startWaiting(for: creation, from: node) {
                    throw AsyncNode.pathError(.dependencyCycle, resolver.serviceKey, node: node)
                }
                let limit = registry.waitLimit
                // Nil when the creation finished meanwhile: claim again.
                let waiters = registry.lock.withLock { locked in creation.waiters(locked) }
                let outcome = await waiters?.wait(limit: limit) ?? .finished
                AsyncCreation.stopWaiting(for: creation, from: node)
                switch outcome {
                case .finished:
                    // Made, or failed with an error the waiters share; a creator's cancellation: claim it again.
                    if let failure = registry.lock.withLock({ _ in creation.failure }) { throw failure }
                case .cancelled:
                    throw CancellationError()
                case .timedOut:
                    throw creation.timedOut(requested: resolver.serviceKey, node: node, limit: limit)
                }
            }
        }
    }

    /// Claims the empty slot at `place` (``claim(_:of:parent:_:)``), which releases the lock, and makes the
    /// instance. In line, in each caller's frame.
    @inline(__always)
    private nonisolated(nonsending) func makeInEmptySlot<Service, Args>(
        _ place: CachePlace, of resolver: ServiceResolver<Service, Args>,
        _ factory: @escaping (Scope, Args) async throws -> Service, _ arguments: Args, node: AsyncNode?,
        _ locked: consuming Locked
    ) async throws -> Service {
        let (decorators, onResolved, onDispose) = (resolver.decoratorsIfAny, resolver.onResolved, resolver.onDispose)
        let claim = try claim(place, of: resolver, parent: node, locked)
        return try await make(
            resolver, factory, arguments, claimed: claim, decorators: decorators, onResolved: onResolved,
            onDispose: onDispose)
    }

    /// Returns the slot's instance, awaits the task making it, or makes it: exactly once per slot.
    private nonisolated(nonsending) func resolve<Service, Args>(
        _ place: CachePlace, of resolver: ServiceResolver<Service, Args>,
        _ factory: @escaping (Scope, Args) async throws -> Service, _ arguments: Args, node: AsyncNode?,
        _ locked: consuming Locked
    ) async throws -> Service {
        let slot = place.slot
        while true {
            locked = try refuseDisposed(place.owner, of: resolver, locked)
            // Mostly empty or being made (the synchronous attempt found no instance); made after a wait, or meanwhile.
            switch slot.state {
            case .empty:
                return try await makeInEmptySlot(place, of: resolver, factory, arguments, node: node, locked)
            case .creatingAsync(let creation):
                // This task's own chain is making it (directly, or in a parent task awaiting this one), or the
                // task making it waits, through other creations, for one this chain makes: a cycle.
                if let node, node.isMaking(creation) || !AsyncCreation.startWaiting(for: creation, from: node) {
                    registry.lock.release(locked)
                    throw AsyncNode.pathError(.dependencyCycle, resolver.serviceKey, node: node)
                }
                // Unfinished while the slot holds it (nil only for one that finished: nothing to wait for).
                let waiters = creation.waiters(locked)
                registry.lock.release(locked)
                let limit = registry.waitLimit
                let outcome = await waiters?.wait(limit: limit) ?? .finished
                AsyncCreation.stopWaiting(for: creation, from: node)
                switch outcome {
                case .finished:
                    break
                case .cancelled:
                    // A cancelled waiter stops waiting; the creation goes on for the others.
                    throw CancellationError()
                case .timedOut:
                    throw creation.timedOut(requested: resolver.serviceKey, node: node, limit: limit)
                }
                locked = registry.lock.acquire()
                // A creation that failed fails its waiters with its error; the next resolve tries again.
                if let failure = creation.failure {
                    registry.lock.release(locked)
                    throw failure
                }
            case .creating, .initializing:
                // A synchronous creation on some thread (a main-actor registration's, made on the main actor):
                // awaited, no thread blocked.
                let flight = slot.flight(of: resolver, locked)
                registry.lock.release(locked)
                if let flight { try await awaitCreation(flight, requested: resolver.serviceKey, node: node) }
                locked = registry.lock.acquire()
            case .created(let box):
                do throws(DeadInstance) {
                    return try createdInstance(box, at: place, of: resolver, locked)
                } catch {
                    // Dead: the slot is empty for the next creation.
                    locked = registry.lock.acquire()
                }
            }
        }
    }

    /// Runs an async factory and the decorators with the registration on this task's async resolution path; a
    /// decorated instance's layers that dispose themselves go to `layers`.
    @inline(__always)
    private nonisolated(nonsending) func make<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ factory: @escaping (Scope, Args) async throws -> Service,
        _ arguments: Args, in scope: Scope, graphCreation creation: AsyncCreation?, node: AsyncNode?, decorators: [Decorator<Service>]?,
        layers: inout [InstanceDisposal]?
    ) async throws -> Service {
        if let node {
            if node.contains(resolver) { throw AsyncNode.pathError(.dependencyCycle, resolver.serviceKey, node: node) }
            if node.depth >= ResolutionError.maximumDepth {
                throw AsyncNode.pathError(.resolutionTooDeep, resolver.serviceKey, node: node)
            }
        }
        let entered = AsyncNode(registration: resolver, scope: scope, graphCreation: creation, parent: node)
        defer { entered.finish() }
        let start = creationStart()
        do {
            // The decorators run with the node bound too, as a synchronous creation's run on its path.
            let instance = try await AsyncNode.innermostBinding.withValue(entered) {
                let made = try await factory(scope, arguments)
                guard let decorators else { return made }
                return try Self.decorate(made, of: resolver, with: decorators, in: scope, layers: &layers)
            }
            scope.reportCreation(of: resolver, since: start)
            return instance
        } catch {
            throw AsyncNode.factoryError(error, resolver.serviceKey, node: node)
        }
    }
}

/// An empty slot, or a child scope's empty table entry, claimed for an `async` creation
/// (``Scope/claim(_:of:parent:_:)``, ``Scope/claimTableEntry(of:parent:_:)``): the creation's node, which holds the registration, is the creation that
/// marks it, and links to the node of the factory that resolves this one; what it marks; when the creation
/// started, for the observer. Not generic, so that an unspecialized `async` frame holds it without looking its
/// type up. Ended once: committed, or abandoned.
@usableFromInline
struct SlotClaim {
    /// What a claim marks.
    enum Marked {
        /// A slot, at its place.
        case slot(CachePlace)
        /// The table entry at an index of a child scope, which keeps the instance as it is.
        case tableEntry(Scope, Int)
    }

    @usableFromInline let node: AsyncNode
    let marked: Marked
    let start: UInt64

    init(node: AsyncNode, marked: Marked, start: UInt64) {
        self.node = node
        self.marked = marked
        self.start = start
    }

    /// The scope whose cache keeps the instance: the factory runs for it.
    @usableFromInline var owner: Scope {
        switch marked {
        case .slot(let place): place.owner
        case .tableEntry(let owner, _): owner
        }
    }

    /// Ends the creation that failed with `error`, which the factory or a decorator threw: ends the node, settles
    /// the slot (or clears the mark) and wakes its waiters, who share the failure (not a cancellation: one of them
    /// makes the instance then), and drops the callbacks kept for the instance. Returns the error to throw.
    @usableFromInline
    func abandon(failing error: any Error) -> any Error {
        node.finish()
        let failure = AsyncNode.factoryError(error, node.serviceKey, node: node.parent)
        switch marked {
        case .slot(let place):
            place.owner.abandon(.slot(place.slot, .task(node)), failing: failure as? ResolutionError)
        case .tableEntry(let owner, let index):
            owner.abandon(.tableEntryOfTask(index, node), failing: failure as? ResolutionError)
        }
        _ = node.takeCallbacks()
        return failure
    }
}

/// A slot claimed by ``Scope/claimUncreated(_:_:generation:otherwise:)``, with what the creation needs that was
/// read under the lock: returned to the specialized caller, which passes it on.
@usableFromInline
struct UncreatedClaim<Service, Args> {
    @usableFromInline let slot: SlotClaim
    @usableFromInline let factory: (Scope, Args) async throws -> Service
    @usableFromInline let decorators: [Decorator<Service>]?
    @usableFromInline let onResolved: (@Sendable (Scope, Service) throws -> Void)?
    @usableFromInline let onDispose: DisposeHook<Service>?

    init(
        slot: SlotClaim, factory: @escaping (Scope, Args) async throws -> Service, decorators: [Decorator<Service>]?,
        onResolved: (@Sendable (Scope, Service) throws -> Void)?, onDispose: DisposeHook<Service>?
    ) {
        self.slot = slot
        self.factory = factory
        self.decorators = decorators
        self.onResolved = onResolved
        self.onDispose = onDispose
    }
}
