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
    @inlinable @inline(never)
    func resolveInstanceNotInlined<Service, Args>(_ type: Service.Type, _ arguments: Args) throws(ResolutionError) -> Service {
        try resolveInstance(Service.self, arguments)
    }

    /// The same with a key, for the same reason.
    @inlinable @inline(never)
    func resolveInstanceNotInlined<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?
    ) throws(ResolutionError) -> Service {
        try resolveInstance(Service.self, arguments, key: key)
    }

    /// The same with a key of a concrete type.
    @inlinable @inline(never)
    func resolveInstanceNotInlined<Service, Args, Key: Hashable>(
        _ type: Service.Type, _ arguments: Args, typedKey key: Key
    ) throws(ResolutionError) -> Service {
        try resolveInstance(Service.self, arguments, typedKey: key)
    }

    /// The locked lookup for an `async` resolve, then the registration's creation, awaited.
    @usableFromInline
    func resolveAwaiting<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?
    ) async throws -> Service {
        switch try lockAndFind(Service.self, arguments, key: key) {
        case .resolved(let value):
            return value
        case .registration(let resolver, let registeredIn, let localsIndex):
            guard let factory = resolver.asyncFactory else {
                // Replaced by a synchronous registration since the synchronous path looked.
                registry.lock.unlock()
                return try resolveInstance(Service.self, arguments, key: key)
            }
            return try await resolveRegistered(
                resolver, factory, arguments, registeredIn: registeredIn, localsIndex: localsIndex)
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
            let made = try await make(resolver, factory, arguments, in: self, creation: nil, node: node, decorators: decorators)
            if let onResolved {
                do {
                    try runCallback(onResolved, resolver, self, made.instance)
                } catch {
                    Self.discard(made, of: resolver)
                    throw error
                }
            }
            guard resolver.isDisposableTransient(made.instance) else { return made.instance }
            return try admitDisposableTransient(made.instance, of: resolver, layers: made.layers)
        case .graph:
            let onResolved = resolver.onResolved
            let decorators = resolver.decoratorsIfAny
            registry.lock.unlock()
            // One per outermost async resolve: kept on the chain of factories that is running.
            if let box = node?.graph.instance(for: resolver.index) {
                return resolver.instance(in: box)
            }
            let instance = try await make(
                resolver, factory, arguments, in: self, creation: nil, node: node, decorators: decorators).instance
            if let node {
                let kept = node.graph.keep(resolver.cached(instance), for: resolver.index)
                let instance = resolver.instance(in: kept)
                if let onResolved { try runCallback(onResolved, resolver, self, instance) }
                return instance
            }
            if let onResolved { try runCallback(onResolved, resolver, self, instance) }
            return instance
        case .singleton, .weak, .inScope, .scopedTo:
            let owner = try cacheOwner(of: resolver, registeredIn: registeredIn)
            let place = try cachePlace(
                of: resolver, arguments, owner: owner, registeredIn: registeredIn, localsIndex: localsIndex)
            return try await resolve(place, of: resolver, factory, arguments, node: node)
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
        defer { if retiredWeakBox != nil { ReadSection.waitForReaders() } }
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
                let waiter = creation.addWaiter()
                registry.lock.unlock()
                let cancelled = await creation.wait(waiter, lock: registry.lock)
                AsyncCreation.stopWaiting(from: node)
                // A cancelled waiter stops waiting; the creation goes on for the others.
                if cancelled { throw CancellationError() }
                registry.lock.lock()
            case .creating, .initializing:
                // A synchronous creation on some thread: not made for an async registration, but served.
                let flight = slot.flight(of: resolver)
                registry.lock.unlock()
                if let flight {
                    try ResolutionContext.current.wait(for: flight, requested: resolver.serviceKey, limit: registry.waitLimit)
                }
                registry.lock.lock()
            case .empty:
                let creation = AsyncCreation()
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
    /// way out settles the slot and wakes the waiters (who make it again when this one failed).
    private func make<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ factory: @escaping (Scope, Args) async throws -> Service,
        _ arguments: Args, place: CachePlace, creation: AsyncCreation, node: AsyncNode?,
        decorators: [Decorator<Service>]?, onResolved: (@Sendable (Scope, Service) throws -> Void)?,
        onDispose: DisposeHook<Service>?
    ) async throws -> Service {
        let owner = place.owner
        let slot = place.slot
        func abandon() {
            let waiters: [CheckedContinuation<Void, Never>] = registry.lock.withLock {
                slot.state = .empty
                return creation.finish()
            }
            for waiter in waiters { waiter.resume() }
        }
        let made: Made<Service>
        do {
            made = try await make(resolver, factory, arguments, in: owner, creation: creation, node: node, decorators: decorators)
        } catch {
            abandon()
            throw error
        }
        let instance = made.instance
        guard let (box, record) = cacheEntry(for: made, of: resolver, slot: slot, onDispose: onDispose) else {
            abandon()
            throw failure(.weakValueType, resolver.serviceKey)
        }
        registry.lock.lock()
        guard !owner.isDisposedValue else {
            registry.lock.unlock()
            abandon()
            try? record?.dispose()
            throw failure(.scopeDisposed, resolver.serviceKey, scopeKey: owner.key)
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
                abandon()
                if isOurs { try? record?.dispose() }
                throw error
            }
            registry.lock.lock()
            creation.callbackContext = nil
            // Disposed while the callback ran: the disposal took the record and disposes the instance.
            if owner.isDisposedValue {
                registry.lock.unlock()
                abandon()
                throw failure(.scopeDisposed, resolver.serviceKey, scopeKey: owner.key)
            }
        }
        _ = owner.store(box, in: slot, of: resolver, publishes: place.publishes)
        let waiters = creation.finish()
        registry.lock.unlock()
        for waiter in waiters { waiter.resume() }
        return instance
    }

    /// Runs an async factory and the decorators with the registration on this task's async resolution path.
    private func make<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ factory: @escaping (Scope, Args) async throws -> Service,
        _ arguments: Args, in scope: Scope, creation: AsyncCreation?, node: AsyncNode?, decorators: [Decorator<Service>]?
    ) async throws -> Made<Service> {
        if let node {
            if node.contains(resolver) { throw AsyncNode.pathError(.dependencyCycle, resolver.serviceKey, node: node) }
            if node.depth >= ResolutionError.maximumDepth {
                throw AsyncNode.pathError(.resolutionTooDeep, resolver.serviceKey, node: node)
            }
        }
        let entered = AsyncNode(registration: resolver, creation: creation, parent: node)
        let start = registry.observedWord.loadRelaxed() != 0 ? Registry.now() : 0
        do {
            let instance = try await AsyncNode.$current.withValue(entered) { try await factory(scope, arguments) }
            var made = Made(instance: instance, layers: nil)
            if let decorators { made = try Self.decorate(instance, of: resolver, with: decorators, in: scope) }
            if start != 0 { scope.reportCreation(resolver.serviceKey, since: start) }
            return made
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

/// The `.graph` instances of one outermost async resolve, by registration index.
final class AsyncGraph: @unchecked Sendable {  // `instances` is guarded by `lock`
    private let lock = Lock()
    private var instances: [Int: AnyObject] = [:]

    func instance(for index: Int) -> AnyObject? {
        lock.withLock { instances[index] }
    }

    /// Keeps `box` unless a child task kept one first; returns the one kept.
    func keep(_ box: AnyObject, for index: Int) -> AnyObject {
        lock.withLock {
            if let kept = instances[index] { return kept }
            instances[index] = box
            return box
        }
    }
}

/// An `async` creation of a reused instance under way: the tasks awaiting it (continuations, no blocked
/// thread), and what its creator waits for, to see a cycle across tasks before it deadlocks.
final class AsyncCreation: @unchecked Sendable {
    // `waiters`, `nextWaiter`, `isFinished`, `box` and `callbackContext` are guarded by the container's lock;
    // `waitingOn` by `AsyncCreation.waitLock`.
    private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextWaiter = 0
    private var isFinished = false
    /// The instance, while its `resolved` callback runs on `callbackContext`'s thread.
    var box: AnyObject?
    var callbackContext: ResolutionContext?
    /// The creation the task making this one is waiting for, if any.
    private var waitingOn: AsyncCreation?

    /// Guards every creation's `waitingOn`: the wait-for graph between tasks.
    private static let waitLock = Lock()

    /// A number for a new waiter. Call with the container's lock held.
    func addWaiter() -> Int {
        nextWaiter += 1
        return nextWaiter
    }

    /// Suspends until the creation finishes (made or failed), or the task is cancelled. Call without the lock.
    /// - Returns: Whether the task was cancelled.
    func wait(_ waiter: Int, lock: borrowing Lock) async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                lock.lock()
                // Finished already, or cancelled before the handler could find the continuation: go on.
                if isFinished || Task.isCancelled {
                    lock.unlock()
                    continuation.resume()
                    return
                }
                waiters[waiter] = continuation
                lock.unlock()
            }
        } onCancel: {
            let continuation = lock.withLock { waiters.removeValue(forKey: waiter) }
            continuation?.resume()
        }
        return Task.isCancelled
    }

    /// Ends the creation and takes its waiters, to resume once the lock is released. Call with the lock held.
    func finish() -> [CheckedContinuation<Void, Never>] {
        isFinished = true
        box = nil
        callbackContext = nil
        defer { waiters = [:] }
        return Array(waiters.values)
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
