#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// MARK: - Observing resolutions, creations and disposals

/// Receives what a container does: for logging, metrics and tracing. Every method has a default that does
/// nothing, so implement only what you need. Called on the thread or task that resolves or disposes, with
/// no lock held; keep it quick.
public protocol ResolutionObserver: Sendable {
    /// A resolve finished (`event.error` is set when it failed); `event.duration` covers the whole resolve.
    func resolved(_ event: ResolutionEvent)
    /// A factory made an instance; `event.duration` covers the factory and its decorators.
    func created(_ event: ResolutionEvent)
    /// A cached instance was disposed: one event, or, when its hooks threw, one for each error (`event.error`): an
    /// `onDispose` hook's and the instance's own `dispose()`'s, each layer's of a decorated instance.
    func disposed(_ event: DisposalEvent)
}

extension ResolutionObserver {
    public func resolved(_ event: ResolutionEvent) {}
    public func created(_ event: ResolutionEvent) {}
    public func disposed(_ event: DisposalEvent) {}
}

/// A resolve or a creation, as an observer sees it.
public struct ResolutionEvent: @unchecked Sendable {  // `scopeKey` is an immutable key (see `ServiceKey`)
    /// The service, arguments type and key resolved.
    public let service: ServiceKey
    /// The key of the scope it was resolved from (nil for the root).
    public let scopeKey: AnyHashable?
    /// How long it took, in nanoseconds (monotonic clock).
    public let duration: UInt64
    /// Why it failed, for a resolve that failed.
    public let error: ResolutionError?
}

/// A disposal, as an observer sees it.
public struct DisposalEvent: @unchecked Sendable {  // see `ResolutionEvent`
    /// The registration whose instance was disposed.
    public let service: ServiceKey
    /// The key of the disposed scope (nil for the root).
    public let scopeKey: AnyHashable?
    /// What one of the disposal hooks threw, if one threw.
    public let error: (any Error)?
}

extension Container {
    /// The observer of this container's resolutions, creations and disposals; nil (the default) for none.
    ///
    /// ```swift
    /// container.observer = MetricsObserver()   // resolved(_:), created(_:), disposed(_:)
    /// ```
    /// With none, the resolve path does not look for one: a cached hit stays lock-free. While one is set,
    /// every resolve takes the container's lock (so that none goes unseen): observing costs what it sees.
    public var observer: (any ResolutionObserver)? {
        get { registry.lock.withLock { _ in registry.observer } }
        set {
            var replaced = newValue
            registry.setObserving { swap(&replaced, &registry.observer) }
            // Released with the lock released: its deinit may resolve.
            withExtendedLifetime(replaced) {}
        }
    }

    /// Whether resolutions record who resolved what, for ``dependencyGraph()``'s observed edges. Off by
    /// default; while on, every resolve takes the container's lock, as with an ``observer``.
    public var recordsDependencies: Bool {
        get { registry.lock.withLock { _ in registry.recordsDependencies } }
        set { registry.setObserving { registry.recordsDependencies = newValue } }
    }

    /// Whether caches keep weak references to the instances they hold, so that ``Scope/survivors`` can say
    /// which of a disposed scope's instances are still alive. Off by default (no cost); turn it on in tests.
    public var tracksInstances: Bool {
        get { registry.lock.withLock { _ in registry.tracksInstances } }
        set { registry.lock.withLock { _ in registry.tracksInstances = newValue } }
    }
}

extension Registry {
    /// Changes what observes, and routes every resolve through the locked path while anything does.
    func setObserving(_ body: () -> Void) {
        let retired: LookupTable? = lock.withLock { locked in
            body()
            observedWord.store(observer != nil || recordsDependencies ? 1 : 0)
            return replaceTable(locked)
        }
        Registry.release(retiredTable: retired)
    }

    /// The monotonic clock, in nanoseconds.
    static func now() -> UInt64 {
        MonotonicClock.now()
    }
}

extension Scope {
    /// The locked path of an observed container: records the dependency, resolves, tells the observer.
    func resolveObserved<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?,
        resolve: () throws(ResolutionError) -> Service
    ) throws(ResolutionError) -> Service {
        let context = ResolutionContext.current
        // Resolved by an observer's callback: not observed, so that the observer does not recurse.
        guard !context.isNotifying else { return try resolve() }
        let requested = ServiceKey(service: Service.self, arguments: Args.self, key: key)
        // Who resolves it: the factory running on this thread, or else the async factory of this task.
        let parent = context.innermostKey ?? AsyncNode.current?.registration.serviceKey
        // The edge's key is interned before the lock (its `==` is user code); one nothing registered only while
        // recording, so that a container that only observes keeps no key it was asked for.
        var edgeTarget = parent == nil ? nil : registry.intern(requested, adding: false)
        if parent != nil, edgeTarget == nil, registry.lock.withLock({ _ in registry.recordsDependencies }) {
            edgeTarget = registry.intern(requested, adding: true)
        }
        let observer = registry.lock.withLock { _ -> (any ResolutionObserver)? in
            if registry.recordsDependencies, let parent, let edgeTarget {
                registry.observedEdges.insert(DependencyGraph.Edge(from: parent, to: edgeTarget))
            }
            return registry.observer
        }
        guard let observer else { return try resolve() }
        let start = Registry.now()
        do {
            let instance = try resolve()
            let event = ResolutionEvent(service: requested, scopeKey: self.key, duration: Registry.now() - start, error: nil)
            context.notify { observer.resolved(event) }
            return instance
        } catch {
            // An async resolve goes on and awaits it: not a failure yet.
            if !(error.code == .requiresAwait && error.isAwaitableHere) {
                let event = ResolutionEvent(service: requested, scopeKey: self.key, duration: Registry.now() - start, error: error)
                context.notify { observer.resolved(event) }
            }
            throw error
        }
    }

    /// Tells the observer, if any, that a factory made an instance of `service` in `start`…now. Called only
    /// when the observed word is set.
    func reportCreation(_ service: ServiceKey, since start: UInt64) {
        let context = ResolutionContext.current
        guard !context.isNotifying, let observer = registry.lock.withLock({ _ in registry.observer }) else { return }
        let event = ResolutionEvent(service: service, scopeKey: key, duration: Registry.now() - start, error: nil)
        context.notify { observer.created(event) }
    }

    /// The `await` resolve of `requested`, which `resolve` makes or awaits, told to the observer once it
    /// returns or throws (a cancelled one is not: it has no ``ResolutionError``). It reads the observer with
    /// the lock held; `resolve` releases it.
    nonisolated(nonsending) func resolveAwaitingObserved<Service>(
        _ requested: ServiceKey, _ locked: consuming Locked,
        resolve: nonisolated(nonsending) (consuming Locked) async throws -> Service
    ) async throws -> Service {
        guard let observer = registry.observer else { return try await resolve(locked) }
        let start = Registry.now()
        do {
            let instance = try await resolve(locked)
            let event = ResolutionEvent(service: requested, scopeKey: key, duration: Registry.now() - start, error: nil)
            ResolutionContext.current.notify { observer.resolved(event) }
            return instance
        } catch let error as ResolutionError {
            let event = ResolutionEvent(service: requested, scopeKey: key, duration: Registry.now() - start, error: error)
            ResolutionContext.current.notify { observer.resolved(event) }
            throw error
        }
    }

    /// Tells the observer, if any, of each disposal that `dispose()` ran. Called only when the observed
    /// word is set.
    func reportDisposals(_ disposed: [(ServiceKey, (any Error)?)]) {
        let context = ResolutionContext.current
        guard !context.isNotifying, let observer = registry.lock.withLock({ _ in registry.observer }) else { return }
        context.notify {
            for (service, error) in disposed { observer.disposed(DisposalEvent(service: service, scopeKey: key, error: error)) }
        }
    }
}
