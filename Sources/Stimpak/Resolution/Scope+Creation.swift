/// The creation core: every step of making an instance that does not suspend, written once for the synchronous
/// path (Scope+SyncResolution.swift, Scope+TableEntry.swift) and the async one (Scope+AsyncResolution.swift),
/// which differ only where the async one awaits: its factory, and a wait for another task's creation.
///
/// A creation, on either path: the rules checked before it (``refuseCaptive(_:node:_:)``), the factory and its
/// decorators (``decorate(_:of:with:in:layers:)``), timed for the observer (``creationStart()``), then a
/// transient handed out (``handOut(transient:layers:of:onResolved:)``: its `resolved` callback, the disposable
/// transient rule) or a reused instance committed (``commit(_:layers:of:at:by:onResolved:onDispose:)``: its
/// disposal record kept, its `resolved` callback run, the slot settled, the instance published and tracked, the
/// waiters woken); a creation that fails is abandoned (``abandon(_:failing:)``), which settles it too.
extension Scope {
    // MARK: Before the factory

    /// Throws `.captiveDependency`, with the lock released, when `resolver` is reused per scope (`.inScope`,
    /// `.scopedTo`) and a container-wide registration that would capture its instance is being made: on this
    /// thread, or in the async chain that ends at `node` (nil on the synchronous path, which reads no task-local
    /// value).
    @inline(__always)
    func refuseCaptive<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, node: AsyncNode?, _ locked: consuming Locked
    ) throws(ResolutionError) -> Locked {
        guard resolver.reuse.kind == .inScope || resolver.reuse.kind == .scopedTo,
            let captor = ResolutionContext.currentCaptor(locked) ?? node?.captor(locked)
        else { return locked }
        registry.lock.release(locked)
        throw captiveDependency(resolver, captor: captor)
    }

    /// Throws `.scopeDisposed`, with the lock released, when `owner`, the scope whose cache keeps `resolver`'s
    /// instance, is disposed.
    @inline(__always)
    func refuseDisposed<Service, Args>(
        _ owner: Scope, of resolver: ServiceResolver<Service, Args>, _ locked: consuming Locked
    ) throws(ResolutionError) -> Locked {
        guard owner.isDisposedValue else { return locked }
        registry.lock.release(locked)
        throw failure(.scopeDisposed, resolver.serviceKey, scopeKey: owner.key)
    }

    // MARK: The factory

    /// When the container is observed, the time a creation starts, for ``reportCreation(of:since:)``; else 0.
    @inline(__always)
    func creationStart() -> UInt64 {
        registry.observedWord.loadRelaxed() != 0 ? Registry.now() : 0
    }

    /// Runs a registration's synchronous factory and its decorators with the registration on this thread's
    /// resolution path. Call without the lock. A decorated instance's layers that dispose themselves
    /// go to `layers` (an `inout` of a non-generic type: a generic result type would look up its metadata on
    /// every creation, the locked path being unspecialized).
    func make<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>,
        _ arguments: Args,
        in scope: Scope,
        decorators: [Decorator<Service>]?,
        context: ResolutionContext,
        layers: inout [InstanceDisposal]?
    ) throws(ResolutionError) -> Service {
        try context.enter(resolver, for: scope)
        defer { context.leave() }
        let start = creationStart()
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
        scope.reportCreation(of: resolver, since: start)
        return instance
    }

    /// Tells the observer that an instance of `resolver` was made, when ``creationStart()`` timed its creation.
    @inline(__always)
    func reportCreation<Service, Args>(of resolver: ServiceResolver<Service, Args>, since start: UInt64) {
        if start != 0 { reportCreation(resolver.serviceKey, since: start) }
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

    /// Runs `resolver`'s `resolved` callback on `instance` with the registration on this thread's resolution
    /// path (`context`, this thread's), so that a resolve of it from the callback is seen as a cycle or gets
    /// the instance cached for the callback. Call without the lock.
    func runCallback<Service, Args>(
        _ callback: @Sendable (Scope, Service) throws -> Void,
        of resolver: ServiceResolver<Service, Args>,
        _ scope: Scope,
        _ instance: Service,
        context: ResolutionContext
    ) throws(ResolutionError) {
        try context.enter(resolver, for: scope)
        defer { context.leave() }
        do {
            try callback(scope, instance)
        } catch {
            throw factoryFailure(error, of: resolver.serviceKey, context: context)
        }
    }

    /// Whether a reused instance's `resolved` callback that failed with `error` runs again when the outermost
    /// resolve ends (``ResolutionContext/deferCallback(_:)``) instead of failing the creation: it met a cycle, and
    /// this thread is still making another instance (the path is not empty once the callback has left it), which
    /// the cycle may go through: a `Parent` whose factory resolved the `Child` whose callback wants the `Parent`.
    func defersCallback(after error: ResolutionError, context: ResolutionContext) -> Bool {
        guard error.code == .dependencyCycle, context.depth > 0, let reuse = error.reuse else { return false }
        // A transient met again is a new instance: no later run would find the one being made.
        return reuse.kind != .transient
    }

    // MARK: A transient

    /// Hands out a new transient instance: runs its `resolved` callback (an instance whose callback throws is
    /// discarded: no one will get it), then applies the disposable-transient rule
    /// (``admitDisposableTransient(_:of:layers:)``). Call without the lock.
    func handOut<Service, Args>(
        transient instance: Service, layers: [InstanceDisposal]?, of resolver: ServiceResolver<Service, Args>,
        onResolved: (@Sendable (Scope, Service) throws -> Void)?
    ) throws(ResolutionError) -> Service {
        if let onResolved {
            do {
                try runCallback(onResolved, of: resolver, self, instance, context: .current)
            } catch {
                Self.discard(instance, layers: layers, of: resolver)
                throw error
            }
        }
        // A `Disposable` layer under a decorator that is not (`layers` holds only those) is one too.
        guard resolver.isDisposableTransient(instance) || layers?.isEmpty == false else { return instance }
        return try admitDisposableTransient(instance, of: resolver, layers: layers)
    }

    /// Hands out, or has this scope track, or disposes and refuses a `Disposable` instance of a transient,
    /// as its registration says. Call without the lock: it takes it.
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
        var locked = registry.lock.acquire()
        switch resolver.disposableTransients {
        case .allowed:
            registry.lock.release(locked)
            return instance
        case .tracked:
            let record = DisposalRecord.of(
                instance, of: resolver, slot: nil, onDispose: resolver.onDispose, layers: layers)
            locked = try keepDisposal(record, of: resolver, ending: nil, locked)
            registry.lock.release(locked)
            return instance
        case .refused:
            registry.lock.release(locked)
            // Made here and refused here: nothing else would dispose it.
            try? DisposalRecord.of(instance, of: resolver, slot: nil, onDispose: nil, layers: layers)?.dispose()
            var error = failure(.disposableTransient, resolver.serviceKey)
            error.isDisposableLayer = InstanceDisposal.of(instance).object == nil
            throw error
        }
    }

    // MARK: A reused instance

    /// Commits a reused instance that `maker` made for `place`: keeps its disposal record in the owner's, runs
    /// its `resolved` callback with the instance cached for this thread (so that what the callback resolves can
    /// get back to it), then caches it in the slot, publishes and tracks it, and wakes the waiters. Every way
    /// out settles the slot: a value made by a `.weak` registration, the owner disposed meanwhile, a callback
    /// that throws. Call without the lock.
    func commit<Service, Args>(
        _ instance: Service,
        layers: [InstanceDisposal]?,
        of resolver: ServiceResolver<Service, Args>,
        at place: CachePlace,
        by maker: SlotMaker,
        onResolved: (@Sendable (Scope, Service) throws -> Void)?,
        onDispose: DisposeHook<Service>?
    ) throws(ResolutionError) -> Service {
        let owner = place.owner
        let creation = Creation.slot(place.slot, maker)
        guard
            let (box, record) = cacheEntry(
                for: instance, layers: layers, of: resolver, slot: place.slot, onDispose: onDispose)
        else {
            let error = failure(.weakValueType, resolver.serviceKey)
            owner.abandon(creation, failing: error)
            throw error
        }
        var locked = try owner.lockAndKeepDisposal(record, of: resolver, ending: creation)
        var awaiting: AwaitingCallback?
        if let onResolved {
            let context = startCallback(box, in: place.slot, by: maker, locked)
            registry.lock.release(locked)
            do {
                try runCallback(onResolved, of: resolver, owner, instance, context: context)
            } catch  where defersCallback(after: error, context: context) {
                // The instance is cached below; its callback runs again when the outermost resolve ends.
                context.deferCallback { () throws(ResolutionError) in
                    try self.runCallback(onResolved, of: resolver, owner, instance, context: context)
                }
            } catch  where awaitsBeforeCallback(after: error, context: context, maker: maker) {
                // The instance is cached below; the `await` resolve that made it awaits the instance the callback
                // needs, then runs it again.
                awaiting = AwaitingCallback(scope: owner, needed: error.requested) { () throws(ResolutionError) in
                    try self.runCallback(onResolved, of: resolver, owner, instance, context: .current)
                }
            } catch {
                // The record is this thread's to dispose only if it is still among the scope's: a disposal of the
                // scope during the callback took it, and disposes the instance itself.
                locked = registry.lock.acquire()
                let isOurs = owner.takeDisposal(for: place.slot, locked)
                let waiters = owner.end(creation, failing: error, locked)
                registry.lock.release(locked)
                waiters.wake()
                if isOurs { try? record?.dispose() }
                throw error
            }
            locked = registry.lock.acquire()
            // Disposed while the callback ran (by it, or by another thread): the disposal has taken the
            // record and disposes the instance, which must not be handed out.
            if owner.isDisposedValue {
                let waiters = owner.end(creation, failing: nil, locked)
                registry.lock.release(locked)
                waiters.wake()
                throw failure(.scopeDisposed, resolver.serviceKey, scopeKey: owner.key)
            }
        }
        if let awaiting, case .task(let asyncCreation) = maker { asyncCreation.keepAwaiting(awaiting, locked) }
        let waiters = owner.settle(place.slot, by: maker, storing: box, of: resolver, publishes: place.publishes, locked)
        registry.lock.release(locked)
        waiters.wake()
        // Made: the callbacks deferred while it was being made can find it now.
        try ResolutionContext.endLockedPathResolve(failing: false)
        // An `await` resolve's synchronous attempt: handed to the resolve, which awaits and calls again.
        if let awaiting, case .thread = maker { throw awaitingError(awaiting, of: resolver) }
        return instance
    }

    /// Whether a reused instance's `resolved` callback that failed with `error` runs again once an `await` has got
    /// the instance it needs (``AwaitingCallback``): it needs one that only an `await` can get (an `async`
    /// factory's, made or being made), no runtime arguments are needed to resolve it, and an `await` resolve made
    /// this instance (a task's creation, or the synchronous attempt of an `await`, not a synchronous factory).
    func awaitsBeforeCallback(after error: ResolutionError, context: ResolutionContext, maker: SlotMaker) -> Bool {
        guard error.code == .requiresAwait, context.depth == 0, !error.requested.hasArguments else { return false }
        if case .task = maker { return true }
        return ResolutionContext.servesAwait
    }

    /// The awaitable `requiresAwait` that hands `awaiting` to the `await` resolve whose synchronous attempt made
    /// `resolver`'s instance: it finds the instance cached once it has run the callback again.
    private func awaitingError<Service, Args>(
        _ awaiting: AwaitingCallback, of resolver: ServiceResolver<Service, Args>
    ) -> ResolutionError {
        var error = failure(.requiresAwait, resolver.serviceKey)
        error.isAwaitableHere = true
        error.awaitingCallback = awaiting
        return error
    }

    /// Caches `box` in `slot` while the `resolved` callback runs on this thread: a resolve of it from the
    /// callback gets it, any other waits. Returns this thread's context.
    private func startCallback(
        _ box: AnyObject, in slot: Slot, by maker: SlotMaker, _ locked: borrowing Locked
    ) -> ResolutionContext {
        switch maker {
        case .thread(let context):
            slot.state = .initializing(box, context)
            return context
        case .task(let creation):
            // The slot stays `.creatingAsync`: the creation holds the instance for this thread.
            let context = ResolutionContext.current
            creation.box = box
            creation.callbackContext = context
            return context
        }
    }

    /// Takes the lock and keeps `record`, a new instance's disposal record, in this scope's, the scope that owns
    /// the instance (see ``keepDisposal(_:of:ending:_:)``), and returns with the lock still held.
    @inline(__always)
    func lockAndKeepDisposal<Service, Args>(
        _ record: DisposalRecord?, of resolver: ServiceResolver<Service, Args>, ending creation: @autoclosure () -> Creation
    ) throws(ResolutionError) -> Locked {
        try keepDisposal(record, of: resolver, ending: creation(), registry.lock.acquire())
    }

    /// Keeps `record`, a new instance's disposal record, in this scope's, the scope that owns the instance. A
    /// scope disposed while the instance was made gets no new instance: `creation` ends (its waiters see the
    /// disposal for themselves), the instance is disposed, and this throws `.scopeDisposed` with the lock
    /// released. (`creation` is made only then: not on the path of every creation.)
    @inline(__always)
    func keepDisposal<Service, Args>(
        _ record: DisposalRecord?, of resolver: ServiceResolver<Service, Args>,
        ending creation: @autoclosure () -> Creation?, _ locked: consuming Locked
    ) throws(ResolutionError) -> Locked {
        guard let record else {
            // No hook to run: a disposal that marks this scope meanwhile, without the container's lock, leaves the
            // instance to be released with the scope's table.
            guard !isDisposedValue else { throw refuseDisposedOwner(nil, of: resolver, ending: creation(), locked) }
            return locked
        }
        // Under this scope's own lock: a disposal that finds the container's lock busy takes the records under it
        // alone, having marked the scope disposed.
        let own = ownLock
        own.lock()
        guard !isDisposedValue else {
            own.unlock()
            throw refuseDisposedOwner(record, of: resolver, ending: creation(), locked)
        }
        disposals.append(record)
        own.unlock()
        return locked
    }

    /// The disposed-owner case of ``keepDisposal(_:of:ending:_:)``, out of line. Returns the error to throw.
    @inline(never)
    private func refuseDisposedOwner<Service, Args>(
        _ record: DisposalRecord?, of resolver: ServiceResolver<Service, Args>, ending creation: Creation?,
        _ locked: consuming Locked
    ) -> ResolutionError {
        let waiters = creation.map { end($0, failing: nil, locked) }
        registry.lock.release(locked)
        waiters?.wake()
        try? record?.dispose()
        return failure(.scopeDisposed, resolver.serviceKey, scopeKey: key)
    }

    /// Ends `creation` without an instance, whose waiters share `failure` (nil: they try again, or see the
    /// scope's disposal for themselves): a slot is empty again, a table entry's mark is cleared (or the slot
    /// made of it settled). Call on the scope that owns the creation; wake the waiters once the lock is
    /// released.
    func end(_ creation: Creation, failing failure: ResolutionError?, _ locked: borrowing Locked) -> Waiters {
        switch creation {
        case .tableEntry(let index, let context):
            return Waiters(flight: endMarkedCreation(index, context: context, locked), failure: failure)
        case .tableEntryOfTask(let index, let node):
            endMarkedCreation(index, of: node, locked)
            return Waiters(tasks: node.finish(failing: failure, locked))
        case .slot(let slot, .thread):
            return Waiters(flight: slot.settle(.empty, locked), failure: failure)
        case .slot(let slot, .task(let asyncCreation)):
            slot.state = .empty
            return Waiters(tasks: asyncCreation.finish(failing: failure, locked))
        }
    }

    /// Ends `creation` without an instance (``end(_:failing:_:)``) and wakes its waiters. Call without the lock,
    /// on the scope that owns the creation.
    func abandon(_ creation: Creation, failing failure: ResolutionError?) {
        let waiters = registry.lock.withLock { locked in end(creation, failing: failure, locked) }
        waiters.wake()
        // Not made: the callbacks deferred while it was being made wait for nothing.
        try? ResolutionContext.endLockedPathResolve(failing: true)
    }

    /// Ends the creation that `maker` ran in `slot` of this scope with its instance, `box`: cached, published
    /// when `publishes` (see ``store(_:in:of:publishes:_:)``). Wake the waiters once the lock is released.
    private func settle<Service, Args>(
        _ slot: Slot, by maker: SlotMaker, storing box: AnyObject, of resolver: ServiceResolver<Service, Args>,
        publishes: Bool, _ locked: borrowing Locked
    ) -> Waiters {
        let flight = store(box, in: slot, of: resolver, publishes: publishes, locked)
        guard case .task(let asyncCreation) = maker else { return Waiters(flight: flight) }
        return Waiters(tasks: asyncCreation.finish(failing: nil, locked))
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
    /// the lock-free path.
    /// - Returns: The flight of the threads waiting for the instance, to finish once the lock is released.
    func store<Service, Args>(
        _ box: AnyObject, in slot: Slot, of resolver: ServiceResolver<Service, Args>, publishes: Bool,
        _ locked: borrowing Locked
    ) -> InFlight? {
        let flight = slot.settle(.created(box), locked)
        slot.registration = resolver
        slot.owner = ObjectIdentifier(self)
        slot.creation = registry.nextCreation(locked)
        if registry.tracksInstances { track(box, of: resolver, locked) }
        guard publishes else { return flight }
        if parent == nil {
            // (A `.weak` registration's `WeakBox` is no `InstanceBox`: published as it is, for `.weakRoot`.) Not
            // once its cache was taken: `slot`, the box's last holder, is the creator's alone, released without
            // waiting for readers, and a bound provider still holds the registration and its root word.
            if !resolver.isRootCacheTaken { resolver.rootWord.publish(instance: box) }
        } else {
            publish(box, index: resolver.index, locked)
        }
        return flight
    }

    /// Records `box`, a new instance of `resolver`, for ``survivors``. Call when the container tracks
    /// instances (`registry.tracksInstances`, tested by the caller: no call otherwise).
    func track<Service, Args>(_ box: AnyObject, of resolver: ServiceResolver<Service, Args>, _ locked: borrowing Locked) {
        guard resolver.reuse.kind != .weak else { return }
        let value = resolver.instance(in: box)
        if Swift.type(of: value as Any) is AnyClass {
            tracked.append(TrackedInstance(service: resolver.serviceKey, instance: value as AnyObject))
        }
    }

    /// Removes this scope's disposal record of `slot`'s instance: true when it was still here, false when a
    /// disposal of the scope took it (and disposes the instance itself).
    func takeDisposal(for slot: Slot, _ locked: borrowing Locked) -> Bool {
        ownLock.withLock {
            guard let index = disposals.lastIndex(where: { $0.slot === slot }) else { return false }
            disposals.remove(at: index)
            return true
        }
    }

    /// The instance `place`'s slot holds, `box`, published below its owner where `place` says; or, for a
    /// `.weak` instance that nobody holds any more, throws, having unpublished it and emptied the slot for the
    /// next creation. Returns or throws with the lock released (a dead instance is retired outside it).
    func createdInstance<Service, Args>(
        _ box: AnyObject, at place: CachePlace, of resolver: ServiceResolver<Service, Args>, _ locked: consuming Locked
    ) throws(DeadInstance) -> Service {
        do throws(DeadInstance) {
            let instance = try liveInstance(in: box, of: resolver)
            place.memo?.publishBelowOwner(place.slot, box: box, index: place.memoIndex, locked)
            registry.lock.release(locked)
            return instance
        } catch {
            if place.publishes { resolver.rootWord.publish(nil) }
            place.slot.state = .empty
            // Released once the readers that may hold its address are done with it, never under the lock.
            registry.lock.release(locked)
            Reclamation.retire(box)
            throw error
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
}

/// A `.weak` instance that nobody holds any more (see ``Scope/liveInstance(in:of:)``).
struct DeadInstance: Error {}

/// Who makes a slot's instance, and so who waits for it.
enum SlotMaker {
    /// A thread running a synchronous factory: the slot is `.creating`, then `.initializing` while the
    /// `resolved` callback runs; other threads wait on the slot's flight, and tasks on the flight's `tasks`.
    case thread(ResolutionContext)
    /// A task awaiting an async factory: the slot is `.creatingAsync`, and other tasks await the creation.
    case task(AsyncCreation)
}

/// A creation under way, as other resolves find it; every way out of it ends it (see ``Scope/end(_:failing:_:)``).
enum Creation {
    /// The owner's table entry at the index, marked with the creating thread's context (see
    /// ``Scope/resolveInTable(_:_:owner:_:)``).
    case tableEntry(Int, ResolutionContext)
    /// The owner's table entry at the index, marked with the creation of a task (its ``AsyncNode``; see
    /// ``Scope/claimUncreated(_:_:generation:otherwise:)``).
    case tableEntryOfTask(Int, AsyncNode)
    /// A slot.
    case slot(Slot, SlotMaker)
}

/// The threads and tasks that waited for a creation that has ended, to wake once the lock is released.
struct Waiters {
    /// What threads wait on (and tasks, on its `tasks`), with the error they share.
    var flight: InFlight?
    var failure: ResolutionError?
    /// The tasks awaiting an async creation, which holds the error they share.
    var tasks: SuspendedTasks?

    init(flight: InFlight?, failure: ResolutionError? = nil) {
        self.flight = flight
        self.failure = failure
    }

    init(tasks: SuspendedTasks?) {
        self.tasks = tasks
    }

    func wake() {
        flight?.finish(failing: failure)
        tasks?.finish()
    }
}
