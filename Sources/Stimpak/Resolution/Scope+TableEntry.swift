/// A child scope's instance kept in its table entry as it is, with no `Slot`, and the entry made a slot when
/// another resolve needs one. See ARCHITECTURE.md.
extension Scope {
    /// Resolves a registration whose instance `owner`, a child scope, keeps in its table as it is, with no
    /// ``Slot`` (see ``ServiceRegistration/isKeptInTable(_:)``): one allocation less per instance. While this thread
    /// makes it, this thread's context marks the entry. A thread that finds another's mark (or a path that
    /// needs a slot's states: a comparator set since, an async resolve) turns the entry into a slot first
    /// (see ``inflatedSlot(_:of:_:)``), and the marking thread settles that slot.
    func resolveInTable<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ arguments: Args, owner: Scope, _ locked: consuming Locked
    ) throws(ResolutionError) -> Service {
        let index = resolver.index
        locked = try refuseDisposed(owner, of: resolver, locked)
        // A scope below the owner of a `.scopedTo` instance publishes it too, as `cachePlace` says.
        let memo = owner !== self ? self : nil
        guard let (cache, creation) = owner.tableEntry(for: index, locked) else {
            let context = ResolutionContext.current
            owner.setCache(context, for: index, locked)
            let onDispose = resolver.onDispose
            let decorators = resolver.decoratorsIfAny
            registry.lock.release(locked)
            return try makeInTable(
                resolver, arguments, owner: owner, onDispose: onDispose, decorators: decorators, context: context)
        }
        guard creation == 0 else {
            // The entry of this registration's index holds its instance.
            let instance = cache.withObject { resolver.instance(in: $0) }
            memo?.publishBelowOwner(cache.object, index: index, locked)
            registry.lock.release(locked)
            return instance
        }
        let place = CachePlace(
            owner: owner, slot: owner.singleSlot(for: resolver, locked), publishes: true, memo: memo, memoIndex: index)
        return try resolve(place, of: resolver, arguments, locked)
    }

    /// Runs the factory of a registration that `owner` keeps in its table (see
    /// ``resolveInTable(_:_:owner:_:)``), then keeps and publishes the instance there, or in the slot a waiting
    /// thread made of the entry. Call without the lock, with the entry marked with `context`.
    private func makeInTable<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>,
        _ arguments: Args,
        owner: Scope,
        onDispose: DisposeHook<Service>?,
        decorators: [Decorator<Service>]?,
        context: ResolutionContext
    ) throws(ResolutionError) -> Service {
        let index = resolver.index
        let instance: Service
        var layers: [InstanceDisposal]?
        do {
            instance = try make(resolver, arguments, in: owner, decorators: decorators, context: context, layers: &layers)
        } catch {
            owner.abandon(.tableEntry(index, context), failing: error)
            throw error
        }
        let box = resolver.cached(instance)
        let record = DisposalRecord.of(instance, of: resolver, slot: nil, onDispose: onDispose, layers: layers)
        // An owner disposed meanwhile took the table with the mark: ending the creation settles a slot made of it.
        let locked = try owner.lockAndKeepDisposal(record, of: resolver, ending: .tableEntry(index, context))
        guard let slot = owner.takeInflatedSlot(index, locked) else {
            // Its factory ran without the lock: the registration may have been taken out of use meanwhile.
            owner.keep(
                box, isBox: resolver.cachesInBox, of: resolver, pinned: resolver.isHeldByTables(locked),
                creation: registry.nextCreation(locked), for: index, locked)
            if registry.tracksInstances { owner.track(box, of: resolver, locked) }
            registry.lock.release(locked)
            // Made: the callbacks deferred while it was being made can find it now.
            try ResolutionContext.endLockedPathResolve(failing: false)
            return instance
        }
        // Published only while the slot is the entry (an instance cache may have taken it as its first slot).
        let flight = owner.store(box, in: slot, of: resolver, publishes: owner.cache(for: index, locked) === slot, locked)
        registry.lock.release(locked)
        flight?.finish()
        try ResolutionContext.endLockedPathResolve(failing: false)
        return instance
    }

    /// The instance of `resolver`, whose factory is `async`, that `owner` (this scope or the one above it that its
    /// `.scopedTo` reuse picks) keeps in its table as it is (``keep(made:layers:of:at:by:onDispose:)``), published
    /// in this scope too when it is below the owner, as ``resolveInTable(_:_:owner:_:)`` serves a synchronous one's;
    /// nil when the entry holds none (a mark, a slot, nothing) or the owner is disposed. Served so, the entry is not
    /// made a slot. Returned as the box (``ServiceResolver/instance(in:)`` unboxes it): an optional `Service` would
    /// cost the unspecialized callers a metadata lookup on every call.
    func keptInstance<Service, Args>(
        of resolver: ServiceResolver<Service, Args>, owner: Scope, _ locked: borrowing Locked
    ) -> AnyObject? {
        guard owner.keepsInTableAwaiting(resolver, locked), !owner.isDisposedValue,
            let (cache, creation) = owner.tableEntry(for: resolver.index, locked), creation != 0
        else { return nil }
        if owner !== self { publishBelowOwner(cache.object, index: resolver.index, locked) }
        return cache.object
    }

    /// Ends this thread's creation at `index` that failed, or whose scope was disposed: clears its mark, or
    /// settles the slot a waiting thread made of it, whose flight the caller finishes once the lock is
    /// released.
    func endMarkedCreation(_ index: Int, context: ResolutionContext, _ locked: borrowing Locked) -> InFlight? {
        if let slot = takeInflatedSlot(index, locked) { return slot.settle(.empty, locked) }
        if cache(for: index, locked) === context { clearCache(for: index, locked) }
        return nil
    }

    /// Ends `node`'s creation at `index` that failed, or whose scope was disposed: clears its mark, or empties the
    /// slot a resolve made of it (``AsyncNode/inflatedSlot``; no thread waits on a `.creatingAsync` slot, only
    /// tasks, on the creation, which the caller finishes).
    func endMarkedCreation(_ index: Int, of node: AsyncNode, _ locked: borrowing Locked) {
        if let slot = node.inflatedSlot.take() {
            _ = slot.settle(.empty, locked)
        } else if cache(for: index, locked) === node {
            clearCache(for: index, locked)
        }
    }

    /// Keeps the instance that `node`'s `async` creation made for the table entry at `index` of this child scope,
    /// which it marked (``claimUncreated(_:_:generation:otherwise:)``): in the entry, published, as
    /// ``makeInTable(_:_:owner:onDispose:decorators:context:)`` keeps a synchronous one; or in the slot another
    /// resolve made of the mark. Then wakes the tasks that await the creation. Throws `scopeDisposed`, having
    /// ended the creation and disposed the instance, when the scope was disposed meanwhile.
    func keep<Service, Args>(
        made instance: Service, layers: [InstanceDisposal]?, of resolver: ServiceResolver<Service, Args>,
        at index: Int, by node: AsyncNode, onDispose: DisposeHook<Service>?
    ) throws(ResolutionError) {
        let box = resolver.cached(instance)
        let record = DisposalRecord.of(instance, of: resolver, slot: nil, onDispose: onDispose, layers: layers)
        let locked = try lockAndKeepDisposal(record, of: resolver, ending: .tableEntryOfTask(index, node))
        if let slot = node.inflatedSlot.take() {
            // Published only while the slot is the entry. No thread waits on a `.creatingAsync` slot: no flight.
            _ = store(box, in: slot, of: resolver, publishes: cache(for: index, locked) === slot, locked)
        } else {
            // Its factory ran without the lock: the registration may have been taken out of use meanwhile.
            keep(
                box, isBox: resolver.cachesInBox, of: resolver, pinned: resolver.isHeldByTables(locked),
                creation: registry.nextCreation(locked), for: index, locked)
            if registry.tracksInstances { track(box, of: resolver, locked) }
        }
        let tasks = node.finish(failing: nil, locked)
        registry.lock.release(locked)
        tasks?.finish()
        // Made: the callbacks deferred while it was being made can find it now.
        try ResolutionContext.endLockedPathResolve(failing: false)
    }

    /// The slot another thread made of this thread's mark at `index` in this scope's table (see
    /// ``inflatedSlot(_:of:_:)``), taken out of ``Registry/inflatedCreations``, or nil.
    func takeInflatedSlot(_ index: Int, _ locked: borrowing Locked) -> Slot? {
        guard !registry.inflatedCreations.isEmpty else { return nil }
        let scope = ObjectIdentifier(self)
        guard let position = registry.inflatedCreations.firstIndex(where: { $0.scope == scope && $0.index == index })
        else { return nil }
        return registry.inflatedCreations.remove(at: position).slot
    }

    /// The slot that takes over an entry of this child scope's table that holds no slot (see
    /// ``resolveInTable(_:_:owner:_:)``): for an instance kept as it is, a slot that holds it, with its
    /// registration and creation number; for a thread's mark, a slot being made by that thread, which it
    /// settles; for a task's mark (its ``AsyncNode``), a `.creatingAsync` slot kept on the node, which the task's
    /// creation settles. Nil for the root scope and for an instance cache.
    func inflatedSlot<Service, Args>(
        _ existing: AnyObject, of resolver: ServiceResolver<Service, Args>, _ locked: borrowing Locked
    ) -> Slot? {
        guard parent != nil else { return nil }
        let index = resolver.index
        // Decided before a slot is made: an instance cache (every comparator resolve comes here) gets none.
        let slot: Slot
        if let maker = existing as? ResolutionContext {
            slot = Slot()
            slot.state = .creating(maker)
            registry.inflatedCreations.append((ObjectIdentifier(self), index, slot))
        } else if let creation = existing as? AsyncNode {
            // A task's `async` creation (see `claimUncreated`): the slot is awaited as one it marked. Kept on the
            // node, which ends with it, not in the registry's list, which every end of a marked creation searches.
            assert(!creation.hasEnded(locked), "an ended creation's mark is never left in a table")
            slot = Slot()
            slot.state = .creatingAsync(creation)
            creation.inflatedSlot = slot
        } else if let creation = tableEntry(for: index, locked)?.creation, creation != 0 {
            slot = Slot()
            slot.state = .created(existing)
            slot.registration = resolver
            slot.owner = ObjectIdentifier(self)
            slot.creation = creation
        } else {
            return nil
        }
        setCache(slot, for: index, locked)
        return slot
    }
}
