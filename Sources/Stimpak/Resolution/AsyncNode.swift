import CStimpakAtomics

/// One `async` factory running: its registration, the scope it runs for, the creation it fills (nil for a
/// transient; for a reused instance, the node itself, which marks its slot or table entry), and the node of the
/// factory that resolved it. The chain is a task's async resolution path; child tasks inherit it (a task-local
/// value), so a child that resolves what its parent is making is a cycle, not a deadlock, and the objects a child
/// makes for the factory resolve their property wrappers from its scope.
@usableFromInline
final class AsyncNode: AsyncCreation, @unchecked Sendable {  // `graphStorage` is guarded by `graphLock`, `inflatedSlot` by the container's lock
    /// The innermost async factory running in this task, or nil.
    static var current: AsyncNode? {
        guard let node = innermost, !node.isFinished else { return nil }
        return node
    }

    /// The node bound around the innermost async factory this task runs in, or was started in: an unstructured
    /// `Task` that a factory starts copies it, and outlives the factory (``isFinished``).
    static var innermost: AsyncNode? { innermostBinding.get() }

    /// ``innermost``'s task-local value, bound around a factory with `withValue` (where the creation is inlined into
    /// the resolve's caller, too: the binding is reachable from there).
    @usableFromInline static let innermostBinding = TaskLocal<AsyncNode?>(wrappedValue: nil)

    // ``AsyncCreation/nodeWord``, atomic, through ``wordAddress`` only: bit 0 set once the factory has returned or
    // thrown (``finish()``), read by any task that holds the node; bit 1 set, under `graphLock`, once an outermost
    // node has made its graph.
    let registration: any Registration
    /// The scope the factory runs for: the property wrappers of what it makes resolve from it.
    let scope: Scope
    /// Whether the node is the creation it fills: a reused instance's, whose slot or table entry it marks.
    private let isOwnCreation: Bool
    /// The creation of a `.graph` instance, claimed in the chain's graph, which the node fills.
    private let graphCreation: AsyncCreation?
    /// The slot that another resolve made of the table entry this node marks (see
    /// ``Scope/inflatedSlot(_:of:_:)``), for the creation to settle; guarded by the lock of `scope`'s container.
    @exclusivity(unchecked) var inflatedSlot: Slot?
    let parent: AsyncNode?
    let depth: Int
    /// The chain's outermost node, which keeps its graph; nil for that node itself.
    private let outermost: AsyncNode?
    /// In the outermost node, the `.graph` instances of the chain, made by its first `.graph` resolve: most
    /// chains have none, and a graph is two allocations.
    private var graphStorage: AsyncGraph?
    /// Guards every outermost node's `graphStorage`, taken only by a `.graph` resolve and when an outermost
    /// factory that made a graph returns.
    private static let graphLock = Lock()

    /// A node for `registration`'s factory, run for `scope` below `parent`. The creation it fills is the node itself
    /// when `isOwnCreation` (a reused instance's), else `graphCreation` (a `.graph` instance's), else none (a
    /// transient's).
    init(
        registration: any Registration, scope: Scope, isOwnCreation: Bool = false, graphCreation: AsyncCreation? = nil,
        parent: AsyncNode?
    ) {
        self.registration = registration
        self.scope = scope
        self.isOwnCreation = isOwnCreation
        self.graphCreation = graphCreation
        self.parent = parent
        self.depth = (parent?.depth ?? 0) + 1
        self.outermost = parent.map { $0.outermost ?? $0 }
        super.init(serviceKey: registration.serviceKey)
        assert(
            withUnsafeMutablePointer(to: &nodeWord) { UnsafeMutableRawPointer($0) }
                == UnsafeMutableRawPointer(wordAddress),
            "AsyncCreation.nodeWord must be the first stored property")
        // Through the atomic accessor, as every later access is: a plain store to a property that Swift code never
        // reads is one the optimizer may drop.
        stimpak_store_relaxed(wordAddress, 0)
    }

    /// The creation the node fills: itself (a reused instance's), a `.graph` instance's, or none (a transient's).
    var creation: AsyncCreation? { isOwnCreation ? self : graphCreation }

    /// ``AsyncCreation/nodeWord``'s address: the start of the object's stored properties.
    private var wordAddress: UnsafeMutablePointer<UInt> {
        _getUnsafePointerToStoredProperties(self).assumingMemoryBound(to: UInt.self)
    }

    /// Whether the factory has returned: a task that still holds the node (an unstructured `Task` the factory
    /// started: a structured child task ends before its factory returns) resolves as outside every factory, with
    /// no path, no captor and no `.graph` instances of the factory's resolve.
    var isFinished: Bool { stimpak_load(wordAddress) & 1 != 0 }

    /// Marks the factory returned; an outermost node that made a graph lets its `.graph` instances go.
    func finish() {
        // Most chains make no graph: no lock. A graph made meanwhile set its bit first (see `graph`), under the
        // lock, which this then waits for.
        guard setBits(1) & 2 != 0 else { return }
        let graph: AsyncGraph? = Self.graphLock.withLock { graphStorage.take() }
        // Released outside the lock: the instances' deinits may resolve.
        withExtendedLifetime(graph) {}
    }

    /// The `.graph` instances of the outermost async resolve, shared by the whole chain; a throwaway one once the
    /// outermost factory has returned (a task it started, which resolves as outside every factory, may have read
    /// the chain just before).
    var graph: AsyncGraph {
        let holder = outermost ?? self
        return Self.graphLock.withLock {
            if let graph = holder.graphStorage { return graph }
            let graph = AsyncGraph()
            // The bit first: a `finish()` that runs after it waits for this lock, then takes the graph.
            guard holder.setBits(2) & 1 == 0 else { return graph }
            holder.graphStorage = graph
            return graph
        }
    }

    /// Sets `bits` in ``AsyncCreation/nodeWord``; returns the bits before.
    private func setBits(_ bits: UInt) -> UInt {
        var expected = stimpak_load(wordAddress)
        while stimpak_compare_exchange(wordAddress, &expected, expected | bits) == 0 {}
        return expected
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

    /// Keeps `callback` in this chain's creation of a reused instance of `service` (not a `.graph` one: a
    /// synchronous resolve never finds those), to run once it is made: false when the chain makes none, or that
    /// creation has finished. Takes the lock of the container whose slot the creation fills.
    func deferUntilMade(_ callback: AwaitingCallback, needing service: ServiceKey) -> Bool {
        guard
            let maker = chain.first(where: {
                $0.creation?.serviceKey == service && $0.registration.reuse.kind != .graph
            }),
            let creation = maker.creation
        else { return false }
        // The slot (or table entry) is in the scope its factory runs for.
        return maker.scope.registry.lock.withLock { locked in creation.deferUntilMade(callback, locked) }
    }

    /// The service keys on the path, outermost first.
    var pathKeys: [ServiceKey] {
        chain.map(\.registration.serviceKey).reversed()
    }

    /// A container-wide registration on the chain that would capture a scoped service (see
    /// ``ResolutionContext/currentCaptor(_:)``).
    func captor(_ locked: borrowing Locked) -> (any Registration)? {
        chain.map(\.registration).last { $0.capturesScopedServices(locked) }
    }

    /// An error for `requested`, resolved inside the chain ending at `node`, with the path.
    static func pathError(
        _ code: ResolutionError.Code, _ requested: ServiceKey, node: AsyncNode?, underlyingError: (any Error)? = nil
    ) -> ResolutionError {
        .met(code, requested, inside: node?.pathKeys ?? [], underlyingError: underlyingError)
    }

    /// What an `async` factory's `error` becomes: a ``ResolutionError`` or a `CancellationError` goes on as it
    /// is, any other is the factory's failure (``ResolutionError/Code/factoryFailed``). Synchronous, so that the
    /// casts' values live on the thread's stack, not in the `async` frame, which would allocate each of them
    /// (`CancellationError` is the concurrency library's resilient type) on every creation.
    static func factoryError(_ error: any Error, _ requested: ServiceKey, node: AsyncNode?) -> any Error {
        if error is ResolutionError || error is CancellationError { return error }
        return pathError(.factoryFailed, requested, node: node, underlyingError: error)
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
