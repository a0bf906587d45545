/// Creation: the steps of making an instance that the synchronous and the async path share.
extension Scope {
    /// Hands out, or has this scope track, or disposes and refuses a `Disposable` instance of a transient,
    /// as its registration says. Called with the lock released.
    @usableFromInline
    func admitDisposableTransient<Service, Args>(
        _ instance: Service, of resolver: ServiceResolver<Service, Args>
    ) throws(ResolutionError) -> Service {
        try admitDisposableTransient(instance, of: resolver, layers: nil)
    }

    /// The same for a decorated instance, whose disposal includes the `layers` under it.
    func admitDisposableTransient<Service, Args>(
        _ instance: Service, of resolver: ServiceResolver<Service, Args>, layers: [InstanceDisposal]?
    ) throws(ResolutionError) -> Service {
        registry.lock.lock()
        switch resolver.disposableTransients {
        case .allowed:
            registry.lock.unlock()
            return instance
        case .tracked:
            let record = DisposalRecord.of(
                instance, of: resolver, slot: nil, onDispose: resolver.onDispose, layers: layers)
            guard !isDisposedValue else {
                registry.lock.unlock()
                try? record?.dispose()
                throw failure(.scopeDisposed, resolver.serviceKey, scopeKey: key)
            }
            if let record { disposals.append(record) }
            registry.lock.unlock()
            return instance
        case .refused:
            registry.lock.unlock()
            // Made here and refused here: nothing else would dispose it.
            try? DisposalRecord.of(instance, of: resolver, slot: nil, onDispose: nil, layers: layers)?.dispose()
            throw failure(.disposableTransient, resolver.serviceKey)
        }
    }

    /// The instance a slot caches (see ``CachedInstance``): a strong one always, a `.weak` one while someone holds it; throws when
    /// it is dead. Returned directly (no `Service?`): the callers run unspecialized, where an optional of a
    /// type parameter costs a metadata lookup on every call.
    func liveInstance<Service, Args>(
        in box: AnyObject, of resolver: ServiceResolver<Service, Args>
    ) throws(DeadInstance) -> Service {
        // A slot holds the instances of one registration, whose service type is `Service`.
        guard resolver.reuse.kind == .weak else { return resolver.instance(in: box) }
        return try Self.liveWeakInstance(in: unsafeDowncast(box, to: WeakBox.self))
    }

    @inline(never)
    private static func liveWeakInstance<Service>(in box: WeakBox) throws(DeadInstance) -> Service {
        // Unwrapped before the cast, as on the lock-free path (see `finish`).
        guard let object = box.object, let instance = object as? Service else { throw DeadInstance() }
        return instance
    }

    /// Records `box`, a new instance of `resolver`, for ``survivors``. Call with the lock held, when the
    /// container tracks instances (`registry.tracksInstances`, tested by the caller: no call otherwise).
    func track<Service, Args>(_ box: AnyObject, of resolver: ServiceResolver<Service, Args>) {
        guard resolver.reuse.kind != .weak else { return }
        let value = resolver.instance(in: box)
        if Swift.type(of: value as Any) is AnyClass {
            tracked.append(TrackedInstance(service: resolver.serviceKey, instance: value as AnyObject))
        }
    }

    /// What a slot caches for a new instance: its box (a ``WeakBox`` for a `.weak` registration) and its
    /// disposal record, of every layer (none for a weak one: the container does not keep it, so it does not
    /// dispose it); nil for a value made by a `.weak` registration, which cannot be referenced weakly.
    func cacheEntry<Service, Args>(
        for instance: Service, layers: [InstanceDisposal]?, of resolver: ServiceResolver<Service, Args>, slot: Slot,
        onDispose: DisposeHook<Service>?
    ) -> (box: AnyObject, record: DisposalRecord?)? {
        guard resolver.reuse.kind == .weak else {
            let record = DisposalRecord.of(instance, of: resolver, slot: slot, onDispose: onDispose, layers: layers)
            return (resolver.cached(instance), record)
        }
        guard Swift.type(of: instance as Any) is AnyClass else { return nil }
        return (WeakBox(instance as AnyObject), nil)
    }

    /// Caches a finished instance (see ``CachedInstance``) in `slot` of this scope and, when `publishes`, publishes it for
    /// the lock-free path. Call with the lock held.
    /// - Returns: The flight of the threads waiting for the instance, to finish once the lock is released.
    func store<Service, Args>(
        _ box: AnyObject, in slot: Slot, of resolver: ServiceResolver<Service, Args>, publishes: Bool
    ) -> InFlight? {
        let flight = slot.settle(.created(box))
        slot.registration = resolver
        slot.owner = ObjectIdentifier(self)
        slot.creation = registry.nextCreation()
        if registry.tracksInstances { track(box, of: resolver) }
        guard publishes else { return flight }
        if parent == nil {
            // (A `.weak` registration's `WeakBox` is no `InstanceBox`: published as it is, for `.weakRoot`.)
            resolver.rootWord.publish(instance: box)
        } else {
            publish(box, index: resolver.index)
        }
        return flight
    }

    /// Runs a registration's factory and its decorators (and, for a transient, its `resolved` callback) with
    /// the registration on this thread's resolution path. Called with the lock released. A decorated instance's
    /// layers that dispose themselves go to `layers` (an `inout` of a non-generic type: a generic result type
    /// would look up its metadata on every creation, the locked path being unspecialized).
    func make<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>,
        _ arguments: Args,
        in scope: Scope,
        decorators: [Decorator<Service>]?,
        onResolved: (@Sendable (Scope, Service) throws -> Void)?,
        context: ResolutionContext,
        layers: inout [InstanceDisposal]?
    ) throws(ResolutionError) -> Service {
        try context.enter(resolver)
        defer { context.leave() }
        let start = registry.observedWord.loadRelaxed() != 0 ? Registry.now() : 0
        let instance: Service
        do {
            let made = try resolver.factory(scope, arguments)
            if let decorators {
                instance = try Self.decorate(made, of: resolver, with: decorators, in: scope, layers: &layers)
            } else {
                instance = made
            }
        } catch {
            throw factoryFailure(error, of: resolver.serviceKey, context: context)
        }
        if start != 0 { scope.reportCreation(resolver.serviceKey, since: start) }
        if let onResolved {
            do {
                try runCallback(onResolved, scope, instance, of: resolver, context: context)
            } catch {
                Self.discard(instance, layers: layers, of: resolver)
                throw error
            }
        }
        return instance
    }

    /// Disposes, as its registration's disposal rules say, an instance that no one will get, with every layer
    /// under it: a decorator or the transient's `resolved` callback failed after the factory made it, so
    /// nothing else would dispose it. A `.weak` or `.graph` instance is never the container's to dispose.
    static func discard<Service, Args>(
        _ instance: Service, layers: [InstanceDisposal]?, of resolver: ServiceResolver<Service, Args>
    ) {
        guard resolver.reuse.kind != .weak, resolver.reuse.kind != .graph else { return }
        try? DisposalRecord.of(
            instance, of: resolver, slot: nil, onDispose: resolver.onDispose, layers: layers)?.dispose()
    }

    /// Removes this scope's disposal record of `slot`'s instance: true when it was still here, false when a
    /// disposal of the scope took it (and disposes the instance itself). Call with the lock held.
    func takeDisposal(for slot: Slot) -> Bool {
        guard let index = disposals.lastIndex(where: { $0.slot === slot }) else { return false }
        disposals.remove(at: index)
        return true
    }

    /// `made`, an instance of `resolver`'s factory, wrapped by `decorators` in registration order (the first
    /// wraps `made`); the layers under the outermost that dispose themselves go to `layers`. When one throws,
    /// what the others made, which no one will get, is discarded (``discard(_:layers:of:)``): the last wrapper
    /// and every layer under it. Out of line: iterating an array of closures over a type parameter looks up metadata, which
    /// the unspecialized caller would otherwise do on every creation.
    @inline(never)
    static func decorate<Service, Args>(
        _ made: Service, of resolver: ServiceResolver<Service, Args>, with decorators: [Decorator<Service>],
        in scope: Scope, layers distinctLayers: inout [InstanceDisposal]?
    ) throws -> Service {
        var instance = made
        // Innermost first: the factory's instance, then each wrapper that another one wraps.
        var layers: [InstanceDisposal] = []
        do {
            for decorator in decorators {
                let wrapper = try decorator(scope, instance)
                layers.append(InstanceDisposal.of(instance))
                instance = wrapper
            }
        } catch {
            discard(instance, layers: InstanceDisposal.distinct(layers, under: instance), of: resolver)
            throw error
        }
        distinctLayers = InstanceDisposal.distinct(layers, under: instance)
        return instance
    }

    func runCallback<Service, Args>(
        _ callback: @Sendable (Scope, Service) throws -> Void,
        _ scope: Scope,
        _ instance: Service,
        of resolver: ServiceResolver<Service, Args>,
        context: ResolutionContext
    ) throws(ResolutionError) {
        do {
            try callback(scope, instance)
        } catch {
            throw factoryFailure(error, of: resolver.serviceKey, context: context)
        }
    }
}

/// A `.weak` instance that nobody holds any more (see ``Scope/liveInstance(in:of:)``).
struct DeadInstance: Error {}
