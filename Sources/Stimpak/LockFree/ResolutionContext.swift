#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CStimpakAtomics

/// One thread's resolution state: the registrations it is creating right now (innermost last), the
/// creation it is blocked on, and its read-section counter (see ``ReadSection``).
///
/// Factories are synchronous, so every resolve a factory makes runs on the thread that called the
/// factory, whether it goes through the scope the factory received or through a captured container.
/// That makes a thread-local stack enough to see a cycle before it recurses.
///
/// The path and the counter live in the thread's `stimpak_thread_state` (C thread-local storage), which
/// the resolve path reaches in a few instructions without touching this object's reference count; only
/// the owning thread writes them (the counter is also read atomically by ``Reclamation``).
@usableFromInline
final class ResolutionContext {
    /// The owning thread's state: valid until the thread exits, and only used on that thread (other
    /// threads use the object itself, through `InFlight.owner`).
    @usableFromInline let state: UnsafeMutablePointer<stimpak_thread_state>
    /// The creation this thread is blocked on; guarded by `ResolutionContext.waitLock`.
    @exclusivity(unchecked) var waitingOn: InFlight?
    /// The registrations whose argument comparators are running on this thread, innermost last; only
    /// this thread touches it.
    @exclusivity(unchecked) private var comparing: [ObjectIdentifier] = []
    /// The `.graph` instances (boxes) made during this thread's outermost resolution, by registration
    /// index; only this thread touches it.
    @exclusivity(unchecked) private var graph: [Int: AnyObject] = [:]
    /// How many creations on this thread keep the graph past their factory, for their `resolved` callback
    /// (see ``holdGraph()``); only this thread touches it.
    @exclusivity(unchecked) private var graphHolds = 0
    /// `resolved` callbacks that met a cycle through an instance this thread was still making, to run when the
    /// outermost resolve ends (see ``deferCallback(_:)``), in the order they were deferred.
    @exclusivity(unchecked) private var deferredCallbacks: [(depth: Int, callback: () throws(ResolutionError) -> Void)] = []
    /// Whether ``runDeferredCallbacks(deeperThan:failing:)`` runs: the resolves of the callbacks it runs end
    /// too, and leave the rest to it.
    @exclusivity(unchecked) private var runsDeferredCallbacks = false
    /// Whether an observer's callback runs on this thread: what it resolves, creates or disposes is not
    /// observed in turn, so an observer that resolves cannot recurse; only this thread touches it.
    @exclusivity(unchecked) private(set) var isNotifying = false
    /// The empty slot of an `async` factory that an `await` resolve's synchronous attempt found, handed to that
    /// resolve with ``handedToAwait``, which takes it as soon as the attempt returns (``takeHandedPlace()``);
    /// only this thread touches it.
    @exclusivity(unchecked) private var handedPlace: AwaitablePlace?
    /// The `requiresAwait` that hands ``handedPlace`` over: one error per thread, made once and renamed for each
    /// service it is thrown for (in place, since the `await` resolve that caught it last has let it go), so that
    /// an `async` creation allocates no error. It carries no path: an observer is not told of an awaitable
    /// `requiresAwait`, and the `await` resolve that catches it reads only its flags.
    @exclusivity(unchecked) private var handedToAwait: ResolutionError?

    /// Guards every context's `waitingOn`: the wait-for graph between threads.
    static let waitLock = Lock()

    /// Made on its thread, by ``makeCurrent()``.
    private init() {
        state = stimpak_thread_get()
        // The registrations, then the scopes their factories run for (see ``factoryScope``).
        let path = UnsafeMutablePointer<UnsafeRawPointer?>.allocate(capacity: 2 * ResolutionError.maximumDepth)
        path.initialize(repeating: nil, count: 2 * ResolutionError.maximumDepth)
        state.pointee.path = path
        state.pointee.depth = 0
        state.pointee.stack_limit = stimpak_stack_limit(UInt(Self.stackReserve))
        // Even: registered, outside any section (no other thread reads it before it is registered).
        state.pointee.section = 0
        ReadSection.register(state)
    }

    /// The stack a resolution leaves for the factories, callbacks and error reporting below it: a nested
    /// resolve that would start with less than this left fails with `.resolutionTooDeep`. (A debug build
    /// uses about 4 KB per nested resolution, a release build about 1.2 KB.)
    static let stackReserve = 64 * 1024

    /// Ends the context's use of its thread's state: called on the thread as it exits.
    private func retire() {
        ReadSection.unregister(state)
        // Odd: a section entered after this (a later destructor's) makes a context again.
        state.pointee.section = 1
        if let path = state.pointee.path {
            UnsafeMutablePointer(mutating: path).deallocate()
        }
        state.pointee.path = nil
        state.pointee.depth = 0
        // The highest address: a path push refuses (2) until a context makes the path again.
        state.pointee.stack_limit = .max
        state.pointee.context = nil
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let err = pthread_key_create(&key) { pointer in
            #if canImport(Darwin)
            let context = Unmanaged<ResolutionContext>.fromOpaque(pointer).takeRetainedValue()
            #else
            guard let pointer else { return }
            let context = Unmanaged<ResolutionContext>.fromOpaque(pointer).takeRetainedValue()
            #endif
            context.retire()
        }
        precondition(err == 0, "pthread_key_create failed with error \(err)")
        return key
    }()

    /// This thread's context, made on first use and released when the thread exits.
    @inlinable
    static var current: ResolutionContext {
        if let pointer = stimpak_thread_get().pointee.context {
            return Unmanaged<ResolutionContext>.fromOpaque(pointer).takeUnretainedValue()
        }
        return makeCurrent()
    }

    @usableFromInline
    static func makeCurrent() -> ResolutionContext {
        let context = ResolutionContext()
        let retained = Unmanaged.passRetained(context).toOpaque()
        let err = pthread_setspecific(key, retained)
        precondition(err == 0, "pthread_setspecific failed with error \(err)")
        context.state.pointee.context = retained
        return context
    }

    // MARK: The resolution path

    /// The service key of the innermost registration on the path, if any.
    var innermostKey: ServiceKey? {
        let depth = Int(state.pointee.depth)
        guard depth > 0, let path = state.pointee.path, let pointer = path[depth - 1] else { return nil }
        return (Unmanaged<AnyObject>.fromOpaque(pointer).takeUnretainedValue() as? any Registration)?.serviceKey
    }

    /// The outermost registration on the path, if any.
    var outermostRegistration: AnyObject? {
        guard state.pointee.depth > 0, let path = state.pointee.path, let pointer = path[0] else { return nil }
        return Unmanaged<AnyObject>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// The service keys on the path, outermost first.
    var pathKeys: [ServiceKey] {
        guard let path = state.pointee.path else { return [] }
        return (0..<Int(state.pointee.depth)).compactMap { index in
            path[index].flatMap { (Unmanaged<AnyObject>.fromOpaque($0).takeUnretainedValue() as? any Registration)?.serviceKey }
        }
    }

    /// The registration on this thread's path, outermost first, that would capture a scoped service resolved
    /// now: one that lives container-wide (a singleton, a weak one) and does not allow captive dependencies.
    /// Answered without the context (no retain) when the path is empty: a resolve outside any factory, as
    /// most are.
    static func currentCaptor(_ locked: borrowing Locked) -> (any Registration)? {
        let state = stimpak_thread_get()
        guard state.pointee.depth != 0 else { return nil }
        return current.pathCaptor(locked)
    }

    private func pathCaptor(_ locked: borrowing Locked) -> (any Registration)? {
        guard let path = state.pointee.path else { return nil }
        for index in 0..<Int(state.pointee.depth) {
            guard let pointer = path[index],
                let registration = Unmanaged<AnyObject>.fromOpaque(pointer).takeUnretainedValue() as? any Registration
            else { continue }
            if registration.capturesScopedServices(locked) { return registration }
        }
        return nil
    }

    /// Pushes `registration`, whose factory or callback runs for `scope`, unless that would close a cycle or nest
    /// too deep.
    @inlinable @inline(__always)
    static func enter(
        _ registration: AnyObject, for scope: Scope, _ state: UnsafeMutablePointer<stimpak_thread_state>
    ) throws(ResolutionError) {
        let status = stimpak_path_enter(
            state, Unmanaged.passUnretained(registration).toOpaque(), Unmanaged.passUnretained(scope).toOpaque(),
            UInt(ResolutionError.maximumDepth))
        if status != 0 { throw current.pathError(status == 1 ? .dependencyCycle : .resolutionTooDeep, registration) }
    }

    @inlinable @inline(__always)
    static func leave(_ state: UnsafeMutablePointer<stimpak_thread_state>) {
        if stimpak_path_leave(state) == 0, state.pointee.has_graph != 0 { current.endGraph() }
    }

    /// Runs a main-actor factory that an `await` resolve runs on the main actor with its registration (the task's
    /// innermost ``AsyncNode``) on the main thread's path, as a synchronous resolve there has it: the synchronous
    /// resolves in the factory see it, a singleton's that would capture a `.inScope` service among them. Not a
    /// `.graph` one's: a `resolved` callback of its graph that met a cycle through it would be deferred to the end of
    /// a synchronous resolve on the main thread, which an `await` resolve never reaches.
    static func runningMainActorFactory<Result>(for scope: Scope, _ factory: () throws -> Result) throws -> Result {
        guard let registration = AsyncNode.current?.registration, registration.reuse.kind != .graph else {
            return try factory()
        }
        let context = current
        try context.enter(registration, for: scope)
        defer { context.leave() }
        return try factory()
    }

    /// Pushes `registration` on this context's path (see ``enter(_:for:_:)``); call on the context's thread.
    func enter(_ registration: AnyObject, for scope: Scope) throws(ResolutionError) {
        try Self.enter(registration, for: scope, state)
    }

    /// The scope of the innermost factory (or `resolved` callback) running on this thread, or nil outside
    /// any: where the property wrappers of the objects it makes resolve from (see ``Scope/current``).
    ///
    /// Safe without a retain until it is read: the entry is on the path only while the frame that pushed it,
    /// which holds the scope, runs below this one on the thread's stack.
    static var factoryScope: Scope? {
        let state = stimpak_thread_get()
        let depth = Int(state.pointee.depth)
        guard depth > 0, let path = state.pointee.path,
            let scope = path[ResolutionError.maximumDepth + depth - 1]
        else { return nil }
        return Unmanaged<Scope>.fromOpaque(scope).takeUnretainedValue()
    }

    func leave() {
        Self.leave(state)
    }

    /// How many registrations are being made on this thread: 0 outside any resolution's factory.
    var depth: Int { Int(state.pointee.depth) }

    /// Runs an observer's callback (see ``isNotifying``). The callback is user code at depth 0, not the `await`
    /// resolve whose synchronous attempt may be running: its own resolves wait as synchronous ones do.
    func notify(_ callback: () -> Void) {
        isNotifying = true
        defer { isNotifying = false }
        Self.runningUserCode(callback)
    }

    /// Runs user code that resolves as a caller of its own (a comparator, an observer's callback) inside a
    /// resolve: while it runs, this thread's path serves no `await` (see ``servesAwait``).
    static func runningUserCode<T>(_ body: () throws -> T) rethrows -> T {
        let state = stimpak_thread_get()
        let servesAwait = state.pointee.serves_await
        state.pointee.serves_await = 0
        defer { state.pointee.serves_await = servesAwait }
        return try body()
    }

    /// Whether the resolve running on this thread is an `await` resolve's synchronous attempt at its outermost
    /// level (not inside a synchronous factory, which cannot suspend): a wait for another thread's creation
    /// is then handed back to the task, which suspends on it (``InFlight/tasks``) instead of blocking its thread.
    static var servesAwait: Bool {
        let state = stimpak_thread_get()
        return state.pointee.serves_await != 0 && state.pointee.depth == 0
    }

    /// Hands `place`, the empty slot of `resolver`'s instance, to the `await` resolve whose synchronous attempt
    /// runs on this thread (``servesAwait``), and returns the error that the attempt throws for it.
    func handOver<Service, Args>(_ place: AwaitablePlace, of resolver: ServiceResolver<Service, Args>) -> ResolutionError {
        handedPlace = place
        // Taken out, so that this is its one reference unless an error that left it is still alive somewhere.
        var error = handedToAwait.take() ?? Self.makeHandedError()
        error.rename(resolver.serviceKey, isMainActor: resolver.isMainActor)
        handedToAwait = error
        return error
    }

    private static func makeHandedError() -> ResolutionError {
        var error = ResolutionError(.requiresAwait, requested: ServiceKey(service: Never.self))
        error.isAwaitableHere = true
        error.handsOverPlace = true
        return error
    }

    /// The place that the synchronous attempt just ended on this thread handed over, if any; nil from then on.
    /// The `await` resolve takes it when the error it caught is the one that handed it
    /// (``ResolutionError/handsOverPlace``); a place left by an error caught elsewhere is replaced by the next
    /// one, and taken by nobody else.
    @usableFromInline
    static func takeHandedPlace() -> AwaitablePlace? {
        guard let pointer = stimpak_thread_get().pointee.context else { return nil }
        return Unmanaged<ResolutionContext>.fromOpaque(pointer)._withUnsafeGuaranteedRef { $0.handedPlace.take() }
    }

    // MARK: The object graph

    /// The `.graph` instance of the registration with `index` made during this outermost resolution.
    func graphInstance(_ index: Int) -> AnyObject? {
        graph[index]
    }

    /// Keeps a `.graph` instance (its box) for the rest of this outermost resolution.
    func keepGraphInstance(_ box: AnyObject, index: Int) {
        graph[index] = box
        // Read, then stored: an in-place `|=` on `pointee` is an access to the whole state, whose `section`
        // word other threads read (TSan reports it).
        state.pointee.has_graph = state.pointee.has_graph | 1
    }

    /// Forgets a `.graph` instance whose `resolved` callback failed.
    func dropGraphInstance(_ index: Int) {
        graph[index] = nil
    }

    /// Ends the object graph: called when the outermost resolution ends. The instances are released after
    /// the dictionary is emptied, so that a deinit that resolves finds a consistent state.
    @usableFromInline
    func endGraph() {
        guard graphHolds == 0 else { return }
        let ended = graph
        graph = [:]
        state.pointee.has_graph = state.pointee.has_graph & ~1
        withExtendedLifetime(ended) {}
    }

    /// Keeps the object graph from ending when the path empties, until ``releaseGraph()``: a reused
    /// registration's `resolved` callback runs after its factory left the path, and is still part of the
    /// outermost resolution (it shares the graph's instances).
    func holdGraph() {
        graphHolds += 1
    }

    /// Ends a ``holdGraph()``, and the graph with it when the path is empty and nothing else holds it.
    func releaseGraph() {
        graphHolds -= 1
        if graphHolds == 0, depth == 0, state.pointee.has_graph != 0 { endGraph() }
    }

    // MARK: Callbacks deferred until the instance they need exists

    /// Defers a `resolved` callback that met a cycle through a reused instance this thread is still making (a
    /// `Parent` whose factory resolved the `Child` whose callback wants the `Parent`): it runs again when the
    /// locked-path resolve that was making that instance ends (``endLockedPathResolve(failing:)``), as Swinject runs
    /// `initCompleted` once the graph is made. The object graph is held until then, so that the callback
    /// shares the resolve's `.graph` instances.
    func deferCallback(_ callback: @escaping () throws(ResolutionError) -> Void) {
        holdGraph()
        deferredCallbacks.append((depth, callback))
        state.pointee.has_graph = state.pointee.has_graph | Self.deferredBit
    }

    /// The bit of the thread state's `has_graph` word that says callbacks are deferred (bit 0: `.graph` instances).
    @usableFromInline static let deferredBit: UInt = 2

    /// Where a locked-path resolve ends, on success or failure (`failing`): runs the callbacks deferred inside it
    /// (deeper on the path than it is), whose instance it has made, or, when it failed, drops them. Throws the
    /// first one's error (the instances stay made). One thread-local load and a bit test when none is deferred.
    @inline(__always)
    static func endLockedPathResolve(failing: Bool) throws(ResolutionError) {
        let state = stimpak_thread_get()
        guard state.pointee.has_graph & deferredBit != 0 else { return }
        try current.runDeferredCallbacks(deeperThan: Int(state.pointee.depth), failing: failing)
    }

    /// Runs (or, `failing`, drops) the deferred callbacks deferred deeper than `depth`, in order, each with the
    /// graph it held; throws the first error once all have run.
    func runDeferredCallbacks(deeperThan depth: Int, failing: Bool) throws(ResolutionError) {
        guard !runsDeferredCallbacks else { return }
        runsDeferredCallbacks = true
        defer { runsDeferredCallbacks = false }
        var firstError: ResolutionError?
        while let place = deferredCallbacks.firstIndex(where: { $0.depth > depth }) {
            let callback = deferredCallbacks.remove(at: place).callback
            if !failing {
                do throws(ResolutionError) {
                    try callback()
                } catch {
                    if firstError == nil { firstError = error }
                }
            }
            releaseGraph()
        }
        if deferredCallbacks.isEmpty { state.pointee.has_graph = state.pointee.has_graph & ~Self.deferredBit }
        if let firstError { throw firstError }
    }

    /// Records that `registration`'s comparator runs on this thread; false when it already is (the
    /// comparator resolves its own registration).
    func startComparing(_ registration: AnyObject) -> Bool {
        let id = ObjectIdentifier(registration)
        guard !comparing.contains(id) else { return false }
        comparing.append(id)
        return true
    }

    func endComparing() {
        comparing.removeLast()
    }

    @usableFromInline
    func pathError(_ code: ResolutionError.Code, _ registration: AnyObject) -> ResolutionError {
        let registration = registration as? any Registration
        // A cycle or a path too deep: `registration` is met inside the path, which is never empty.
        var error = ResolutionError.met(code, registration?.serviceKey ?? ServiceKey(service: Any.self), inside: pathKeys)
        error.reuse = registration?.reuse
        return error
    }

    // MARK: Waiting for another thread's creation

    /// Blocks until `flight` finishes, unless waiting would deadlock (the thread creating it is itself
    /// waiting, directly or through others, for a creation this thread owns) or takes longer than `limit`.
    /// A creation that failed fails its waiters with its error: they do not make the instance again one after
    /// another (the next resolve does).
    func wait(for flight: InFlight, requested: ServiceKey, limit: WaitLimit) throws(ResolutionError) {
        Self.waitLock.lock()
        if flight.isFinished {
            let failure = flight.failure
            Self.waitLock.unlock()
            if let failure { throw failure }
            return
        }
        var owner: ResolutionContext? = flight.owner
        var chain: [ServiceKey] = [flight.resolver.serviceKey]
        while let current = owner {
            if current === self {
                Self.waitLock.unlock()
                var error = ResolutionError(.dependencyCycle, requested: requested, path: pathKeys + chain)
                // What the cycle waits for: a reused instance (see ``Scope/defersCallback(after:context:)``).
                error.reuse = flight.resolver.reuse
                throw error
            }
            // A finished flight's waiter is about to wake: it no longer blocks anyone.
            guard let next = current.waitingOn, !next.isFinished else { break }
            chain.append(next.resolver.serviceKey)
            owner = next.owner
        }
        waitingOn = flight
        Self.waitLock.unlock()

        let finished = flight.waitUntilFinished(limit: limit)

        let (creatorWaitingFor, failure): (ServiceKey?, ResolutionError?) = Self.waitLock.withLock {
            waitingOn = nil
            guard !finished, let next = flight.owner.waitingOn, !next.isFinished else { return (nil, flight.failure) }
            return (next.resolver.serviceKey, nil)
        }
        if let failure { throw failure }
        guard finished else {
            var error = ResolutionError(.waitTimedOut, requested: requested, path: pathKeys + [requested])
            error.creatorWaitingFor = creatorWaitingFor
            error.waitLimit = limit
            throw error
        }
    }
}
/// Makes this thread's context on its first use. A free function, so that the read section's entry, inlined
/// into every resolve, does not look up `ResolutionContext`'s metadata (a call the optimizer hoisted out of
/// this rare branch into the hot path of some resolves).
@usableFromInline @inline(never)
func makeThreadContext() {
    _ = ResolutionContext.makeCurrent()
}
