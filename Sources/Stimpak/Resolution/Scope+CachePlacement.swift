/// Where a reused instance is cached: the owner scope its reuse picks, and the slot there (one, per hashed
/// arguments, or per arguments equal under a comparator).
extension Scope {
    /// Whether this scope, as the owner of `resolver`'s instance, keeps it in its table as it is (see
    /// ``resolveInTable(_:_:owner:_:)``): a child scope, the registration not made in a scope, and one that needs
    /// none of a slot's states (``ServiceRegistration/isKeptInTable(_:)``).
    @inline(__always)
    func keepsInTable<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, registeredIn: Scope?, _ locked: borrowing Locked
    ) -> Bool {
        registeredIn == nil && parent != nil && resolver.isKeptInTable(locked)
    }

    /// Whether this scope keeps the instance of `resolver`, whose factory is `async`, in its table as it is, when
    /// an `await` makes it in this scope (``claimUncreated(_:_:generation:otherwise:)``): a child scope, and a
    /// registration that needs none of a slot's states but `.creatingAsync`, which a resolve that finds the
    /// creation's mark makes of it (``ServiceRegistration/isKeptInTableAwaiting(_:)``).
    @inline(__always)
    func keepsInTableAwaiting<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ locked: borrowing Locked
    ) -> Bool {
        parent != nil && resolver.isKeptInTableAwaiting(locked)
    }

    /// The scope whose cache keeps a reused registration's instances: the one its reuse picks, with the
    /// registering scope of a scope's registration in the root's place.
    func cacheOwner<Service, Args>(
        of resolver: ServiceResolver<Service, Args>, registeredIn: Scope?, _ locked: consuming Locked
    ) throws(ResolutionError) -> Holding<Scope> {
        switch resolver.reuse.kind {
        case .singleton, .weak:
            return Holding(value: registeredIn ?? root, locked: locked)
        case .scopedTo:
            // Comparing scope keys may run user code, so not under the lock (keys and parents never change).
            registry.lock.release(locked)
            guard let found = resolver.reuse.nearestScope(from: self, upTo: registeredIn) else {
                throw noMatchingScope(for: resolver, upTo: registeredIn)
            }
            return Holding(value: found, locked: registry.lock.acquire())
        case .inScope, .transient, .graph:
            return Holding(value: self, locked: locked)
        }
    }

    /// Where a reused registration's instance for `arguments` is cached in `owner` (see
    /// ``cacheOwner(of:registeredIn:_:)``): the slot there, and where the instance is published.
    func cachePlace<Service, Args>(
        of resolver: ServiceResolver<Service, Args>, _ arguments: Args, owner: Scope, registeredIn: Scope?,
        localsIndex: Int, _ locked: consuming Locked
    ) throws(ResolutionError) -> Holding<CachePlace> {
        let slot: Slot
        let publishes: Bool
        switch resolver.matching {
        case .ignored:
            slot = owner.singleSlot(for: resolver, locked)
            // Only the slot of arguments-ignoring registrations is what the lock-free path reads.
            publishes = true
        case .hashed(let hashKey):
            let cache = owner.instanceCache(for: resolver, locked)
            let argumentsKey = hashKey(arguments)
            if let existing = cache.hashed[argumentsKey] {
                slot = existing
            } else {
                slot = Slot()
                cache.hashed[argumentsKey] = slot
            }
            publishes = false
        case .compared(let isEqual):
            let cache = owner.instanceCache(for: resolver, locked)
            let compared = try comparedSlot(in: cache, of: resolver, for: arguments, isEqual: isEqual, locked)
            locked = compared.locked
            slot = compared.value
            publishes = false
        }
        guard registeredIn == nil else {
            // A scope's registration: every resolving scope publishes the instance at the locals index, the
            // one place the `.provided` route reads (not a weak one's box, which is not a cached instance).
            let memo = publishes && resolver.reuse.kind != .weak ? self : nil
            return Holding(
                value: CachePlace(owner: owner, slot: slot, publishes: false, memo: memo, memoIndex: localsIndex),
                locked: locked)
        }
        // A scope below the owner of a `.scopedTo` instance publishes it too, so that its next resolve
        // finds it lock-free.
        let memo = publishes && owner !== self ? self : nil
        return Holding(
            value: CachePlace(owner: owner, slot: slot, publishes: publishes, memo: memo, memoIndex: resolver.index),
            locked: locked)
    }

    /// This scope's slot for an arguments-ignoring registration, made on first use.
    func singleSlot<Service, Args>(for resolver: ServiceResolver<Service, Args>, _ locked: borrowing Locked) -> Slot {
        switch storedCache(for: resolver, locked) {
        case let slot as Slot:
            return slot
        case nil:
            let slot = Slot()
            storeCache(slot, for: resolver, locked)
            return slot
        case let .some(existing):
            if let slot = inflatedSlot(existing, of: resolver, locked) { return slot }
            // A comparator is never taken away, so this is not expected; serve the slot the cache kept.
            let cache = unsafeDowncast(existing, to: InstanceCache<Args>.self)
            if let earlier = cache.earlier { return earlier }
            let slot = Slot()
            cache.earlier = slot
            return slot
        }
    }

    /// This scope's cache for a registration with a comparator, made on first use; a slot cached before
    /// the comparator was set is kept in it.
    func instanceCache<Service, Args>(
        for resolver: ServiceResolver<Service, Args>, _ locked: borrowing Locked
    ) -> InstanceCache<Args> {
        var existing = storedCache(for: resolver, locked)
        if let found = existing, !(found is Slot), let slot = inflatedSlot(found, of: resolver, locked) {
            existing = slot
        }
        if let existing, !(existing is Slot) {
            // Caches are named by the registration's index, so this one was made for these `Args`.
            return unsafeDowncast(existing, to: InstanceCache<Args>.self)
        }
        let cache = InstanceCache<Args>()
        cache.earlier = existing as? Slot
        storeCache(cache, for: resolver, locked)
        return cache
    }

    /// This scope's cache for `resolver` (a ``Slot`` or an ``InstanceCache``): the root scope keeps it on
    /// the registration, a child scope in its table.
    func storedCache<Service, Args>(for resolver: ServiceResolver<Service, Args>, _ locked: borrowing Locked) -> AnyObject? {
        parent == nil ? resolver.rootCache : cache(for: resolver.index, locked)
    }

    /// Sets this scope's cache for `resolver` (see ``storedCache(for:_:)``).
    func storeCache<Service, Args>(
        _ cache: AnyObject, for resolver: ServiceResolver<Service, Args>, _ locked: borrowing Locked
    ) {
        if parent == nil {
            resolver.rootCache = cache
        } else {
            setCache(cache, for: resolver.index, locked)
        }
    }

    /// The slot for arguments equal to `arguments` under the user's comparator, which runs with the lock
    /// released.
    ///
    /// A comparator that resolves its own registration would recurse without end (it runs before the
    /// registration's factory puts it on the path), so this thread's running comparators are recorded
    /// and re-entering one is a cycle.
    func comparedSlot<Service, Args>(
        in cache: InstanceCache<Args>, of resolver: ServiceResolver<Service, Args>, for arguments: Args,
        isEqual: (Args, Args) -> Bool, _ locked: consuming Locked
    ) throws(ResolutionError) -> Holding<Slot> {
        let context = ResolutionContext.current
        var searched = 0
        while searched < cache.compared.count {
            let entries = cache.compared
            guard context.startComparing(resolver) else {
                registry.lock.release(locked)
                throw context.pathError(.dependencyCycle, resolver)
            }
            registry.lock.release(locked)
            let match = ResolutionContext.runningUserCode { entries[searched...].first { isEqual($0.arguments, arguments) } }
            context.endComparing()
            locked = registry.lock.acquire()
            if let match { return Holding(value: match.slot, locked: locked) }
            searched = entries.count
        }
        let slot = Slot()
        cache.compared.append((arguments, slot))
        return Holding(value: slot, locked: locked)
    }
}

/// Where a reused instance is cached and published (see
/// ``Scope/cachePlace(of:_:owner:registeredIn:localsIndex:_:)``).
/// Where the synchronous attempt of an `await` resolve found the empty slot of a registration whose factory is
/// `async`: the `async` resolve takes the lock again and, when no registration changed meanwhile (the
/// registry's generation), goes on from that slot, as `.uncreated` does from the lock-free path.
@usableFromInline
struct AwaitablePlace {
    /// The ``ServiceResolver`` of the resolve's `Service` and `Args`.
    let registration: AnyObject
    /// Its `Service` and `Args`, which the `await` resolve compares with its own before it takes the place: a
    /// resolve nested in the attempt at its top level (user code that resolves) may have handed it over.
    let types: (service: ObjectIdentifier, arguments: ObjectIdentifier)
    let place: CachePlace
    let generation: Int
}

struct CachePlace {
    let owner: Scope
    let slot: Slot
    /// Whether the owner publishes the instance for the lock-free path (in its root word or table).
    let publishes: Bool
    /// The resolving scope, when it publishes the instance too, at `memoIndex`.
    let memo: Scope?
    let memoIndex: Int
}
