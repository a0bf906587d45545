import CStimpakAtomics

/// The `async` resolve path: what an `await scope.require(…)` does once the synchronous path (cached
/// instances, synchronous factories) has said that the service's factory is `async`. See ARCHITECTURE.md.
extension Scope {
    /// Finds or makes the instance registered for (`Service`, `Args`, `key`), awaiting an `async` factory.
    ///
    /// The synchronous path runs first (one call, see ``resolveInstanceNotInlined(_:_:)``), so a cached
    /// instance or a synchronous service costs about what it costs there, without a suspension; only a
    /// registration whose factory is `async` (and not cached yet) goes on to ``resolveAwaiting(_:_:key:)``.
    @inlinable @inline(__always)
    func resolveInstanceAsync<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?
    ) async throws -> Service {
        do throws(ResolutionError) {
            return try resolveInstanceNotInlined(Service.self, arguments, key: key)
        } catch {
            guard error.code == .requiresAwait, error.isAwaitableHere else { throw error }
        }
        return try await resolveAwaiting(Service.self, arguments, key: key)
    }

    /// The same without a key: the synchronous path is the unkeyed one, one call to its specialization.
    @inlinable @inline(__always)
    func resolveInstanceAsync<Service, Args>(_ type: Service.Type, _ arguments: Args) async throws -> Service {
        do throws(ResolutionError) {
            return try resolveInstanceNotInlined(Service.self, arguments)
        } catch {
            guard error.code == .requiresAwait, error.isAwaitableHere else { throw error }
        }
        return try await resolveAwaiting(Service.self, arguments, key: nil)
    }

    /// The same, with a key of a concrete type.
    @inlinable @inline(__always)
    func resolveInstanceAsync<Service, Args, Key: Hashable>(
        _ type: Service.Type, _ arguments: Args, typedKey key: Key
    ) async throws -> Service {
        do throws(ResolutionError) {
            return try resolveInstanceNotInlined(Service.self, arguments, typedKey: key)
        } catch {
            guard error.code == .requiresAwait, error.isAwaitableHere else { throw error }
        }
        return try await resolveAwaiting(Service.self, arguments, key: Scope.erased(key))
    }

    /// The synchronous resolve, specialized in the caller but kept out of line: inlined whole (with a
    /// transient's factory call), it made an `async` resolve too large for the optimizer to inline into its
    /// caller, which then paid an async frame per resolve (four times the synchronous resolve in time).
    ///
    /// It serves an `await` (the thread state's `serves_await`, read only where a resolve would wait for another
    /// thread's creation, see ``ResolutionContext/servesAwait``): such a wait is handed back as an awaitable
    /// `requiresAwait`, and the task suspends on it in ``resolveAwaiting(_:_:key:)`` instead of blocking.
    @inlinable @inline(never)
    func resolveInstanceNotInlined<Service, Args>(_ type: Service.Type, _ arguments: Args) throws(ResolutionError) -> Service {
        let state = stimpak_thread_get()
        state.pointee.serves_await = 1
        defer { state.pointee.serves_await = 0 }
        return try resolveInstance(Service.self, arguments)
    }

    /// The same with a key, for the same reason.
    @inlinable @inline(never)
    func resolveInstanceNotInlined<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?
    ) throws(ResolutionError) -> Service {
        let state = stimpak_thread_get()
        state.pointee.serves_await = 1
        defer { state.pointee.serves_await = 0 }
        return try resolveInstance(Service.self, arguments, key: key)
    }

    /// The same with a key of a concrete type.
    @inlinable @inline(never)
    func resolveInstanceNotInlined<Service, Args, Key: Hashable>(
        _ type: Service.Type, _ arguments: Args, typedKey key: Key
    ) throws(ResolutionError) -> Service {
        let state = stimpak_thread_get()
        state.pointee.serves_await = 1
        defer { state.pointee.serves_await = 0 }
        return try resolveInstance(Service.self, arguments, typedKey: key)
    }

    /// The locked lookup for an `async` resolve, then the registration's creation, awaited. A synchronous
    /// registration comes here when another thread is making its instance: the task suspends until that
    /// creation finishes, then resolves it as the synchronous path does.
    @usableFromInline
    func resolveAwaiting<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?
    ) async throws -> Service {
        while true {
            switch try lockAndFind(Service.self, arguments, key: key) {
            case .resolved(let value):
                return value
            case .registration(let resolver, let registeredIn, let localsIndex):
                if let factory = resolver.asyncFactory {
                    guard registry.observedWord.loadRelaxed() != 0 else {
                        return try await resolveRegistered(
                            resolver, factory, arguments, registeredIn: registeredIn, localsIndex: localsIndex)
                    }
                    // The synchronous attempt left this resolve to the observer of the `await`.
                    return try await resolveAwaitingObserved(ServiceKey(service: Service.self, arguments: Args.self, key: key)) {
                        try await resolveRegistered(
                            resolver, factory, arguments, registeredIn: registeredIn, localsIndex: localsIndex)
                    }
                }
                if let flight = try synchronousCreation(
                    of: resolver, arguments, registeredIn: registeredIn, localsIndex: localsIndex) {
                    try await awaitCreation(flight, requested: resolver.serviceKey, node: AsyncNode.current)
                    continue
                }
                do throws(ResolutionError) {
                    return try resolveInstanceNotInlined(Service.self, arguments, key: key)
                } catch {
                    // Another thread started making it meanwhile: await that creation.
                    guard error.code == .requiresAwait, error.isAwaitableHere else { throw error }
                }
            }
        }
    }

    /// The creation of `resolver`'s instance for `arguments` that another thread runs synchronously, if any, for
    /// an `await` resolve to suspend on. Call with the lock held; returns with it released.
    private func synchronousCreation<Service, Args>(
        of resolver: ServiceResolver<Service, Args>, _ arguments: Args, registeredIn: Scope?, localsIndex: Int
    ) throws(ResolutionError) -> InFlight? {
        switch resolver.reuse.kind {
        case .transient, .graph:
            registry.lock.unlock()
            return nil
        case .singleton, .weak, .inScope, .scopedTo:
            break
        }
        let owner = try cacheOwner(of: resolver, registeredIn: registeredIn)
        // A scope's table entry that another thread marks becomes a slot being made by that thread.
        let slot = try cachePlace(
            of: resolver, arguments, owner: owner, registeredIn: registeredIn, localsIndex: localsIndex).slot
        let flight: InFlight?
        switch slot.state {
        case .creating, .initializing:
            flight = slot.flight(of: resolver)
        case .empty, .created, .creatingAsync:
            flight = nil
        }
        registry.lock.unlock()
        return flight
    }

    /// Suspends until another thread's synchronous creation finishes (no thread blocks), the task is cancelled or
    /// the container's ``WaitLimit`` passes; throws the error the creation failed with. Call without the lock.
    private func awaitCreation(_ flight: InFlight, requested: ServiceKey, node: AsyncNode?) async throws {
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

    /// Makes a transient or `.graph` instance, or awaits the cached one's creation. Call with the lock held;
    /// returns with it released.
    private func resolveRegistered<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ factory: @escaping (Scope, Args) async throws -> Service,
        _ arguments: Args, registeredIn: Scope?, localsIndex: Int
    ) async throws -> Service {
        let node = AsyncNode.current
        if resolver.reuse.kind == .inScope || resolver.reuse.kind == .scopedTo,
           let captor = ResolutionContext.currentCaptor() ?? node?.captor() {
            registry.lock.unlock()
            throw captiveDependency(resolver, captor: captor)
        }
        switch resolver.reuse.kind {
        case .transient:
            let onResolved = resolver.onResolved
            let decorators = resolver.decoratorsIfAny
            registry.lock.unlock()
            var layers: [InstanceDisposal]?
            let instance = try await make(
                resolver, factory, arguments, in: self, creation: nil, node: node, decorators: decorators, layers: &layers)
            if let onResolved {
                do {
                    try runCallback(onResolved, resolver, self, instance)
                } catch {
                    Self.discard(instance, layers: layers, of: resolver)
                    throw error
                }
            }
            guard resolver.isDisposableTransient(instance) else { return instance }
            return try admitDisposableTransient(instance, of: resolver, layers: layers)
        case .graph:
            let onResolved = resolver.onResolved
            let decorators = resolver.decoratorsIfAny
            registry.lock.unlock()
            guard let node else {
                // Resolved outermost: the graph begins with its factory's chain.
                // A `.graph` instance is never disposed, nor are its layers.
                var layers: [InstanceDisposal]?
                let instance = try await make(
                    resolver, factory, arguments, in: self, creation: nil, node: nil, decorators: decorators,
                    layers: &layers)
                if let onResolved { try runCallback(onResolved, resolver, self, instance) }
                return instance
            }
            let instance = try await graphInstance(of: resolver, factory, arguments, node: node, decorators: decorators)
            if let onResolved { try runCallback(onResolved, resolver, self, instance) }
            return instance
        case .singleton, .weak, .inScope, .scopedTo:
            let owner = try cacheOwner(of: resolver, registeredIn: registeredIn)
            let place = try cachePlace(
                of: resolver, arguments, owner: owner, registeredIn: registeredIn, localsIndex: localsIndex)
            return try await resolve(place, of: resolver, factory, arguments, node: node)
        }
    }

    /// The `.graph` instance of the outermost async resolve that `node`'s chain belongs to, made once for the
    /// whole chain and its child tasks: the first task makes it, the others await that creation (a cycle, as
    /// for a reused instance, when the waiting chain makes it). Call without the lock.
    private func graphInstance<Service, Args>(
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
                        resolver, factory, arguments, in: self, creation: creation, node: node, decorators: decorators,
                        layers: &layers)
                } catch {
                    let waiters = registry.lock.withLock { creation.finish(failing: error is CancellationError ? nil : error) }
                    node.graph.settle(resolver.index, nil)
                    waiters?.finish()
                    throw error
                }
                node.graph.settle(resolver.index, resolver.cached(instance))
                registry.lock.withLock { creation.finish(failing: nil) }?.finish()
                return instance
            case .making(let creation):
                if node.isMaking(creation) || !AsyncCreation.startWaiting(for: creation, from: node) {
                    throw AsyncNode.pathError(.dependencyCycle, resolver.serviceKey, node: node)
                }
                let limit = registry.waitLimit
                // Nil when the creation finished meanwhile: claim again.
                let waiters = registry.lock.withLock { creation.waiters() }
                let outcome = await waiters?.wait(limit: limit) ?? .finished
                AsyncCreation.stopWaiting(from: node)
                switch outcome {
                case .finished:
                    // Made, or failed with an error the waiters share; a creator's cancellation: claim it again.
                    if let failure = registry.lock.withLock({ creation.failure }) { throw failure }
                case .cancelled:
                    throw CancellationError()
                case .timedOut:
                    throw creation.timedOut(requested: resolver.serviceKey, node: node, limit: limit)
                }
            }
        }
    }

    /// Returns the slot's instance, awaits the task making it, or makes it: exactly once per slot. Call
    /// with the lock held; returns with it released.
    private func resolve<Service, Args>(
        _ place: CachePlace, of resolver: ServiceResolver<Service, Args>,
        _ factory: @escaping (Scope, Args) async throws -> Service, _ arguments: Args, node: AsyncNode?
    ) async throws -> Service {
        let slot = place.slot
        var retiredWeakBox: AnyObject?
        defer { if let box = retiredWeakBox.take() { Reclamation.retire(box) } }
        while true {
            if place.owner.isDisposedValue {
                registry.lock.unlock()
                throw failure(.scopeDisposed, resolver.serviceKey, scopeKey: place.owner.key)
            }
            switch slot.state {
            case .created(let box):
                do throws(DeadInstance) {
                    let instance = try liveInstance(in: box, of: resolver)
                    place.memo?.publishBelowOwner(slot, box: box, index: place.memoIndex)
                    registry.lock.unlock()
                    return instance
                } catch {
                    // A `.weak` instance nobody holds any more: make the next one (see the synchronous path).
                    if place.publishes { resolver.rootWord.publish(nil) }
                    retiredWeakBox = box
                    slot.state = .empty
                    continue
                }
            case .creatingAsync(let creation):
                // This task's own chain is making it (directly, or in a parent task awaiting this one), or the
                // task making it waits, through other creations, for one this chain makes: a cycle.
                if let node, node.isMaking(creation) || !AsyncCreation.startWaiting(for: creation, from: node) {
                    registry.lock.unlock()
                    throw AsyncNode.pathError(.dependencyCycle, resolver.serviceKey, node: node)
                }
                // Unfinished while the slot holds it (nil only for one that finished: nothing to wait for).
                let waiters = creation.waiters()
                registry.lock.unlock()
                let limit = registry.waitLimit
                let outcome = await waiters?.wait(limit: limit) ?? .finished
                AsyncCreation.stopWaiting(from: node)
                switch outcome {
                case .finished:
                    break
                case .cancelled:
                    // A cancelled waiter stops waiting; the creation goes on for the others.
                    throw CancellationError()
                case .timedOut:
                    throw creation.timedOut(requested: resolver.serviceKey, node: node, limit: limit)
                }
                registry.lock.lock()
                // A creation that failed fails its waiters with its error; the next resolve tries again.
                if let failure = creation.failure {
                    registry.lock.unlock()
                    throw failure
                }
            case .creating, .initializing:
                // A synchronous creation on some thread (a main-actor registration's, made on the main actor):
                // awaited, no thread blocked.
                let flight = slot.flight(of: resolver)
                registry.lock.unlock()
                if let flight { try await awaitCreation(flight, requested: resolver.serviceKey, node: node) }
                registry.lock.lock()
            case .empty:
                let creation = AsyncCreation(serviceKey: resolver.serviceKey)
                slot.state = .creatingAsync(creation)
                let onResolved = resolver.onResolved
                let onDispose = resolver.onDispose
                let decorators = resolver.decoratorsIfAny
                registry.lock.unlock()
                return try await make(
                    resolver, factory, arguments, place: place, creation: creation, node: node, decorators: decorators,
                    onResolved: onResolved, onDispose: onDispose)
            }
        }
    }

    /// Runs an async factory of a reused service, caches the instance, runs its `resolved` callback and
    /// wakes the tasks awaiting it. Called with the lock released and the slot marked with `creation`; every
    /// way out settles the slot and wakes the waiters, who share this creation's failure (all but the
    /// creator's cancellation, after which one of them makes the instance).
    private func make<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ factory: @escaping (Scope, Args) async throws -> Service,
        _ arguments: Args, place: CachePlace, creation: AsyncCreation, node: AsyncNode?,
        decorators: [Decorator<Service>]?, onResolved: (@Sendable (Scope, Service) throws -> Void)?,
        onDispose: DisposeHook<Service>?
    ) async throws -> Service {
        let owner = place.owner
        let slot = place.slot
        func abandon(_ error: any Error) -> any Error {
            let waiters = registry.lock.withLock {
                slot.state = .empty
                return creation.finish(failing: error is CancellationError ? nil : error)
            }
            waiters?.finish()
            return error
        }
        let instance: Service
        var layers: [InstanceDisposal]?
        do {
            instance = try await make(
                resolver, factory, arguments, in: owner, creation: creation, node: node, decorators: decorators,
                layers: &layers)
        } catch {
            throw abandon(error)
        }
        guard let (box, record) = cacheEntry(for: instance, layers: layers, of: resolver, slot: slot, onDispose: onDispose)
        else {
            throw abandon(failure(.weakValueType, resolver.serviceKey))
        }
        registry.lock.lock()
        guard !owner.isDisposedValue else {
            registry.lock.unlock()
            let error = abandon(failure(.scopeDisposed, resolver.serviceKey, scopeKey: owner.key))
            try? record?.dispose()
            throw error
        }
        if let record { owner.disposals.append(record) }
        if let onResolved {
            // Cached for this thread first, so that what the callback resolves can get back to the instance.
            creation.box = box
            creation.callbackContext = ResolutionContext.current
            registry.lock.unlock()
            do {
                try runCallback(onResolved, resolver, owner, instance)
            } catch {
                // Ours to dispose only if still among the scope's records (see the synchronous path).
                let isOurs = registry.lock.withLock { owner.takeDisposal(for: slot) }
                _ = abandon(error)
                if isOurs { try? record?.dispose() }
                throw error
            }
            registry.lock.lock()
            creation.callbackContext = nil
            // Disposed while the callback ran: the disposal took the record and disposes the instance.
            if owner.isDisposedValue {
                registry.lock.unlock()
                throw abandon(failure(.scopeDisposed, resolver.serviceKey, scopeKey: owner.key))
            }
        }
        _ = owner.store(box, in: slot, of: resolver, publishes: place.publishes)
        let waiters = creation.finish(failing: nil)
        registry.lock.unlock()
        waiters?.finish()
        return instance
    }

    /// Runs an async factory and the decorators with the registration on this task's async resolution path; a
    /// decorated instance's layers that dispose themselves go to `layers`.
    private func make<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ factory: @escaping (Scope, Args) async throws -> Service,
        _ arguments: Args, in scope: Scope, creation: AsyncCreation?, node: AsyncNode?, decorators: [Decorator<Service>]?,
        layers: inout [InstanceDisposal]?
    ) async throws -> Service {
        if let node {
            if node.contains(resolver) { throw AsyncNode.pathError(.dependencyCycle, resolver.serviceKey, node: node) }
            if node.depth >= ResolutionError.maximumDepth {
                throw AsyncNode.pathError(.resolutionTooDeep, resolver.serviceKey, node: node)
            }
        }
        let entered = AsyncNode(registration: resolver, creation: creation, parent: node)
        let start = registry.observedWord.loadRelaxed() != 0 ? Registry.now() : 0
        do {
            var instance = try await AsyncNode.$current.withValue(entered) { try await factory(scope, arguments) }
            if let decorators {
                instance = try Self.decorate(instance, of: resolver, with: decorators, in: scope, layers: &layers)
            }
            if start != 0 { scope.reportCreation(resolver.serviceKey, since: start) }
            return instance
        } catch let error as ResolutionError {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch {
            throw AsyncNode.pathError(.factoryFailed, resolver.serviceKey, node: node, underlyingError: error)
        }
    }

    /// Runs a `resolved` callback (synchronous) with the registration on this thread's path.
    private func runCallback<Service, Args>(
        _ callback: @Sendable (Scope, Service) throws -> Void, _ resolver: ServiceResolver<Service, Args>,
        _ scope: Scope, _ instance: Service
    ) throws(ResolutionError) {
        let context = ResolutionContext.current
        try context.enter(resolver)
        defer { context.leave() }
        try runCallback(callback, scope, instance, of: resolver, context: context)
    }
}

/// One `async` factory running: its registration, the creation it fills (nil for a transient), and the
/// node of the factory that resolved it. The chain is a task's async resolution path; child tasks inherit it
/// (a task-local value), so a child that resolves what its parent is making is a cycle, not a deadlock.
final class AsyncNode: Sendable {
    /// The innermost async factory running in this task, or nil.
    @TaskLocal static var current: AsyncNode?

    let registration: any Registration
    let creation: AsyncCreation?
    let parent: AsyncNode?
    let depth: Int
    /// The `.graph` instances of the outermost async resolve, shared by the whole chain.
    let graph: AsyncGraph

    init(registration: any Registration, creation: AsyncCreation?, parent: AsyncNode?) {
        self.registration = registration
        self.creation = creation
        self.parent = parent
        self.depth = (parent?.depth ?? 0) + 1
        self.graph = parent?.graph ?? AsyncGraph()
    }

    /// The nodes from this one out to the outermost.
    private var chain: UnfoldSequence<AsyncNode, (AsyncNode?, Bool)> {
        sequence(first: self) { $0.parent }
    }

    func contains(_ registration: AnyObject) -> Bool {
        chain.contains { $0.registration === registration }
    }

    /// Whether this chain is making `creation`.
    func isMaking(_ creation: AsyncCreation) -> Bool {
        chain.contains { $0.creation === creation }
    }

    /// The creations this chain is making, innermost first.
    var creations: [AsyncCreation] {
        chain.compactMap(\.creation)
    }

    /// The service keys on the path, outermost first.
    var pathKeys: [ServiceKey] {
        chain.map(\.registration.serviceKey).reversed()
    }

    /// A container-wide registration on the chain that would capture a scoped service (see
    /// ``ResolutionContext/currentCaptor()``).
    func captor() -> (any Registration)? {
        chain.map(\.registration).last(where: \.capturesScopedServices)
    }

    /// An error for `requested`, resolved inside the chain ending at `node`, with the path.
    static func pathError(
        _ code: ResolutionError.Code, _ requested: ServiceKey, node: AsyncNode?, underlyingError: (any Error)? = nil
    ) -> ResolutionError {
        let outer = node?.pathKeys ?? []
        return ResolutionError(
            code, requested: requested, path: outer.isEmpty ? [] : outer + [requested], underlyingError: underlyingError)
    }
}

/// The `.graph` instances of one outermost async resolve, by registration index: made, or being made by one
/// task of the chain, which the others await.
final class AsyncGraph: @unchecked Sendable {  // `entries` is guarded by `lock`
    enum Claim {
        /// Made: the cached instance (see ``CachedInstance``).
        case made(AnyObject)
        /// Being made by another task: await the creation.
        case making(AsyncCreation)
        /// Yours to make: settle it with ``settle(_:_:)``, then finish the creation's waiters.
        case claimed(AsyncCreation)
    }

    private enum Entry {
        case made(AnyObject)
        case making(AsyncCreation)
    }

    private let lock = Lock()
    private var entries: [Int: Entry] = [:]

    /// The instance of the registration with `index`, the creation to await, or a new creation for the caller.
    func claim(_ index: Int, _ serviceKey: ServiceKey) -> Claim {
        lock.withLock {
            switch entries[index] {
            case .made(let box)?:
                return .made(box)
            case .making(let creation)?:
                return .making(creation)
            case nil:
                let creation = AsyncCreation(serviceKey: serviceKey)
                entries[index] = .making(creation)
                return .claimed(creation)
            }
        }
    }

    /// Ends a claimed creation: keeps `box` for the rest of the resolve, or, nil when it failed, forgets it
    /// (a task that claims it next makes it).
    func settle(_ index: Int, _ box: AnyObject?) {
        // The creation is released after unlocking, like everything this lock guards.
        let ended: Entry? = lock.withLock {
            defer { entries[index] = box.map { .made($0) } }
            return entries[index]
        }
        withExtendedLifetime(ended) {}
    }
}

/// An `async` creation of a reused instance under way: the tasks awaiting it (suspended, no blocked thread),
/// and what its creator waits for, to see a cycle across tasks before it deadlocks.
final class AsyncCreation: @unchecked Sendable {
    // `box`, `callbackContext`, `failure` and `suspended` are guarded by the container's lock; `waitingOn` by
    // `AsyncCreation.waitLock`; `serviceKey` never changes.
    /// The service being made.
    let serviceKey: ServiceKey
    /// The tasks awaiting the creation, made by the first of them: most creations have none, and the object and
    /// its lock are two allocations.
    private var suspended: SuspendedTasks?
    /// Whether the creation has finished: a task that finds it by another way than its slot (a `.graph`
    /// chain's claim) then waits for nothing.
    private var isFinished = false
    /// The instance, while its `resolved` callback runs on `callbackContext`'s thread.
    var box: AnyObject?
    var callbackContext: ResolutionContext?
    /// The error the creation failed with, which its waiters share; nil while it runs, when it made the
    /// instance, or when its creator was cancelled (a waiter then makes the instance).
    private(set) var failure: (any Error)?
    /// The creation the task making this one is waiting for, if any.
    private var waitingOn: AsyncCreation?

    /// Guards every creation's `waitingOn`: the wait-for graph between tasks.
    private static let waitLock = Lock()

    init(serviceKey: ServiceKey) {
        self.serviceKey = serviceKey
    }

    /// The tasks awaiting the creation, for one more to join, or nil when it has finished. Call with the lock
    /// held: its creator takes them when it finishes.
    func waiters() -> SuspendedTasks? {
        if isFinished { return nil }
        if let suspended { return suspended }
        let made = SuspendedTasks()
        suspended = made
        return made
    }

    /// Ends the creation, with the error it failed with, if it did, and returns its waiters, whom the caller
    /// wakes (``SuspendedTasks/finish()``) once the lock is released. Call with the lock held.
    func finish(failing failure: (any Error)?) -> SuspendedTasks? {
        self.failure = failure
        box = nil
        callbackContext = nil
        isFinished = true
        return suspended.take()
    }

    /// The error for a task that gave up waiting for this creation after `limit`, resolving `requested` in
    /// the chain ending at `node`: it names the waiting services (the path) and the creation waited for.
    func timedOut(requested: ServiceKey, node: AsyncNode?, limit: WaitLimit) -> ResolutionError {
        var error = AsyncNode.pathError(.waitTimedOut, requested, node: node)
        error.waitLimit = limit
        error.isTaskWait = true
        error.creatorWaitingFor = Self.waitLock.withLock { waitingOn?.serviceKey }
        return error
    }

    /// Records that the chain ending at `node` waits for `target`, unless that would close a loop: the task
    /// making `target` waits, through other creations, for one the chain makes.
    /// - Returns: False for a cycle (nothing recorded).
    static func startWaiting(for target: AsyncCreation, from node: AsyncNode) -> Bool {
        let making = node.creations
        guard let innermost = making.first else { return true }
        return waitLock.withLock {
            var next: AsyncCreation? = target
            var steps = 0
            while let creation = next, steps <= ResolutionError.maximumDepth * 4 {
                if making.contains(where: { $0 === creation }) { return false }
                next = creation.waitingOn
                steps += 1
            }
            innermost.waitingOn = target
            return true
        }
    }

    /// Ends what ``startWaiting(for:from:)`` recorded.
    static func stopWaiting(from node: AsyncNode?) {
        guard let innermost = node?.creations.first else { return }
        waitLock.withLock { innermost.waitingOn = nil }
    }
}

/// Tasks suspended until a creation finishes, no thread blocked: each resumes when it finishes, when the task
/// is cancelled, or when the container's ``WaitLimit`` has passed, whichever comes first.
final class SuspendedTasks: @unchecked Sendable {  // `waiters`, `nextWaiter` and `isFinished` are guarded by `lock`
    enum Outcome {
        case finished, cancelled, timedOut
    }

    /// A waiter between its number and its continuation (the timer or a cancellation may end it there),
    /// ended there, or suspended.
    private enum Waiter {
        case arriving
        case ended(Outcome)
        case suspended(CheckedContinuation<Outcome, Never>)
    }

    private let lock = Lock()
    private var waiters: [Int: Waiter] = [:]
    private var nextWaiter = 0
    private var isFinished = false

    /// Suspends until the creation finishes, the task is cancelled or `limit` passes. Call without the
    /// container's lock.
    func wait(limit: WaitLimit) async -> Outcome {
        let waiter: Int = lock.withLock {
            nextWaiter += 1
            waiters[nextWaiter] = .arriving
            return nextWaiter
        }
        // A timer of its own, so that a creation that never finishes (its factory awaits work that waits for
        // it, out of Stimpak's sight) ends the wait.
        let timer = limit.nanoseconds.map { nanoseconds in
            Task.detached {
                try? await Task.sleep(nanoseconds: nanoseconds)
                if !Task.isCancelled { self.end(waiter, .timedOut) }
            }
        }
        defer { timer?.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let outcome: Outcome? = lock.withLock {
                    if isFinished {
                        waiters[waiter] = nil
                        return .finished
                    }
                    if case .ended(let outcome)? = waiters[waiter] {
                        waiters[waiter] = nil
                        return outcome
                    }
                    waiters[waiter] = .suspended(continuation)
                    return nil
                }
                if let outcome { continuation.resume(returning: outcome) }
            }
        } onCancel: {
            end(waiter, .cancelled)
        }
    }

    /// Ends one waiter's wait with `outcome`, unless it has ended.
    private func end(_ waiter: Int, _ outcome: Outcome) {
        let continuation: CheckedContinuation<Outcome, Never>? = lock.withLock {
            switch waiters[waiter] {
            case .arriving?:
                waiters[waiter] = .ended(outcome)
                return nil
            case .suspended(let continuation)?:
                waiters[waiter] = nil
                return continuation
            case .ended?, nil:
                return nil
            }
        }
        continuation?.resume(returning: outcome)
    }

    /// Wakes every waiter, and any that comes later at once: the creation has finished.
    func finish() {
        let continuations: [CheckedContinuation<Outcome, Never>] = lock.withLock {
            isFinished = true
            defer { waiters = [:] }
            return waiters.values.compactMap { waiter in
                if case .suspended(let continuation) = waiter { return continuation }
                return nil
            }
        }
        for continuation in continuations { continuation.resume(returning: .finished) }
    }
}
