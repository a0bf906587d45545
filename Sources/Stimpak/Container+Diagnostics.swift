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
    /// A cached instance was disposed (`event.error` is set when its hook threw).
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
    /// What the disposal hook threw, if it threw.
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
        get { registry.lock.withLock { registry.observer } }
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
        get { registry.lock.withLock { registry.recordsDependencies } }
        set { registry.setObserving { registry.recordsDependencies = newValue } }
    }

    /// Whether caches keep weak references to the instances they hold, so that ``Scope/survivors`` can say
    /// which of a disposed scope's instances are still alive. Off by default (no cost); turn it on in tests.
    public var tracksInstances: Bool {
        get { registry.lock.withLock { registry.tracksInstances } }
        set { registry.lock.withLock { registry.tracksInstances = newValue } }
    }
}

extension Registry {
    /// Changes what observes, and routes every resolve through the locked path while anything does.
    func setObserving(_ body: () -> Void) {
        let retired: LookupTable? = lock.withLock {
            body()
            observedWord.store(observer != nil || recordsDependencies ? 1 : 0)
            return retireTable()
        }
        Registry.release(retiredTable: retired)
    }

    /// The monotonic clock, in nanoseconds.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
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
        var edgeTarget = parent == nil ? nil : registry.keys.intern(requested, adding: false)
        if parent != nil, edgeTarget == nil, registry.lock.withLock({ registry.recordsDependencies }) {
            edgeTarget = registry.keys.intern(requested, adding: true)
        }
        let observer = registry.lock.withLock { () -> (any ResolutionObserver)? in
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
        guard !context.isNotifying, let observer = registry.lock.withLock({ registry.observer }) else { return }
        let event = ResolutionEvent(service: service, scopeKey: key, duration: Registry.now() - start, error: nil)
        context.notify { observer.created(event) }
    }

    /// The `await` resolve of `requested`, which `resolve` makes or awaits, told to the observer once it
    /// returns or throws (a cancelled one is not: it has no ``ResolutionError``). Call with the lock held (it
    /// reads the observer); `resolve` releases it.
    func resolveAwaitingObserved<Service>(
        _ requested: ServiceKey, resolve: () async throws -> Service
    ) async throws -> Service {
        guard let observer = registry.observer else { return try await resolve() }
        let start = Registry.now()
        do {
            let instance = try await resolve()
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
        guard !context.isNotifying, let observer = registry.lock.withLock({ registry.observer }) else { return }
        context.notify {
            for (service, error) in disposed { observer.disposed(DisposalEvent(service: service, scopeKey: key, error: error)) }
        }
    }
}

// MARK: - What is alive

/// A scope and what it caches, for logs (``description``) and tests (the properties).
public struct ScopeReport: @unchecked Sendable, CustomStringConvertible {  // `tree` is immutable, its keys too
    /// One cached instance.
    public struct Instance: Sendable, Equatable, CustomStringConvertible {
        /// Its registration's service, arguments and key.
        public let service: ServiceKey
        /// Its registration's reuse.
        public let reuse: Reuse
        /// Its place in the order the container created instances (1 for the first).
        public let creation: Int

        public var description: String { "#\(creation) \(service.description) \(reuse)" }
    }

    /// One scope of a report, without its children.
    struct Node {
        let key: AnyHashable?
        var instances: [Instance]
        var provided: [ServiceKey]
        var registrations: [ServiceKey]
        /// How far below the reported scope it is (0 for the reported scope).
        let depth: Int
        /// Its open children's places in the tree.
        var children: [Int] = []
        /// The place after its last descendant: its subtree is `place..<end`.
        var end = 0
    }

    /// Every scope of a report in depth-first order, children in opening order: a flat array, so that a deep
    /// chain of scopes costs no stack to build, read, print or release.
    final class Tree {
        let nodes: [Node]

        init(_ nodes: [Node]) { self.nodes = nodes }
    }

    let tree: Tree
    /// This scope's place in `tree`.
    let place: Int

    private var node: Node { tree.nodes[place] }

    /// The scope's key; nil for the root.
    public var key: AnyHashable? { node.key }
    /// The instances it caches, in creation order.
    public var instances: [Instance] { node.instances }
    /// The values put into it with `provide`, and its own registrations.
    public var provided: [ServiceKey] { node.provided }
    public var registrations: [ServiceKey] { node.registrations }
    /// Its open child scopes, in opening order.
    public var children: [ScopeReport] { node.children.map { ScopeReport(tree: tree, place: $0) } }

    /// How many instances this scope and those below it cache.
    public var totalInstances: Int { tree.nodes[place..<node.end].reduce(0) { $0 + $1.instances.count } }
    /// How many scopes are open below this one.
    public var totalScopes: Int { node.end - place - 1 }

    /// The deepest level `description` shows by indentation; a scope below it also names its level, so that
    /// the text of a chain of scopes grows with its length, not with its length squared.
    static let maximumIndentation = 32

    /// The scope and those below it, one line each, indented by level, with what each caches, holds and
    /// registers.
    public var description: String {
        var lines: [String] = []
        let base = node.depth
        for scope in tree.nodes[place..<node.end] {
            let level = scope.depth - base
            let indent = String(repeating: "  ", count: min(level, Self.maximumIndentation))
            let deep = level > Self.maximumIndentation ? "[level \(level)] " : ""
            let name = scope.key.map { "scope \(String(reflecting: $0.base))" } ?? "root"
            lines.append("\(indent)\(deep)\(name): \(scope.instances.count) cached, \(scope.children.count) open below")
            for instance in scope.instances { lines.append("\(indent)  - \(instance)") }
            for key in scope.provided { lines.append("\(indent)  - provided \(key.description)") }
            for key in scope.registrations { lines.append("\(indent)  - registered here: \(key.description)") }
        }
        return lines.joined(separator: "\n")
    }
}

/// An instance a disposed scope cached that is still alive: something outside the container holds it.
public struct Survivor: Sendable, CustomStringConvertible {
    /// Its registration's service, arguments and key.
    public let service: ServiceKey
    /// Its dynamic type.
    public let type: String

    public var description: String { "\(service.description) (a \(type))" }
}

/// The instances a disposed scope cached that are still alive (``Scope/requireNoSurvivors()``).
public struct SurvivorReport: Error, Sendable, CustomStringConvertible {
    public let scopeKey: String
    public let survivors: [Survivor]

    public var description: String {
        "Stimpak disposed the scope \(scopeKey), but \(survivors.count) of its instances are still alive: "
            + survivors.map(\.description).joined(separator: ", ")
            + ". Something outside the container still holds them: a closure, a cache, a task, a singleton that"
            + " captured them (see captive dependencies), or a cycle of strong references."
    }
}

/// A weak reference to a cached instance (``Container/tracksInstances``).
final class TrackedInstance: @unchecked Sendable {  // `instance` is read and written atomically by the runtime
    let service: ServiceKey
    weak var instance: AnyObject?

    init(service: ServiceKey, instance: AnyObject) {
        self.service = service
        self.instance = instance
    }
}

extension Scope {
    /// This scope, what it caches, and its open scopes below, as a value and as text (`description`).
    ///
    /// ```swift
    /// print(container.root.report())
    /// // root: 2 cached, 1 open below
    /// //   - #1 Database .singleton
    /// //   ...
    /// ```
    public func report() -> ScopeReport {
        var nodes = registry.lock.withLock {
            // Depth first without recursion: a chain of scopes may be as deep as a program opens it.
            var nodes: [ScopeReport.Node] = []
            var pending: [(scope: Scope, parent: Int?, depth: Int)] = [(self, nil, 0)]
            while let (scope, parent, depth) = pending.popLast() {
                let place = nodes.count
                nodes.append(scope.reportNodeLocked(depth: depth))
                if let parent { nodes[parent].children.append(place) }
                for child in scope.openChildrenInOrder.reversed() { pending.append((child, place, depth + 1)) }
            }
            return nodes
        }
        // A subtree ends where its last child's does; a child comes after its parent, so one backward pass.
        // Sorted without the lock: a key's description may be user code.
        for place in nodes.indices.reversed() {
            nodes[place].end = nodes[place].children.last.map { nodes[$0].end } ?? place + 1
            nodes[place].instances.sort { $0.creation < $1.creation }
            nodes[place].provided.sort { $0.description < $1.description }
            nodes[place].registrations.sort { $0.description < $1.description }
        }
        return ScopeReport(tree: ScopeReport.Tree(nodes), place: 0)
    }

    /// This scope in a report, without its children, in no order. Call with the lock held.
    private func reportNodeLocked(depth: Int) -> ScopeReport.Node {
        let caches: [(cache: AnyObject, kept: ScopeTable.Kept?)] = parent == nil
            ? registry.entries.values.compactMap { entry in entry.registration?.rootCacheObject.map { ($0, nil) } }
            : tableCaches
        var instances: [ScopeReport.Instance] = []
        let mine = ObjectIdentifier(self)
        for (cache, kept) in caches {
            // An instance this scope keeps as it is, without a slot (see `resolveInTable`).
            if let (registration, creation) = kept {
                guard let registration = registration as? any Registration else { continue }
                instances.append(ScopeReport.Instance(
                    service: registration.serviceKey, reuse: registration.reuse, creation: creation))
                continue
            }
            let slots = (cache as? SlotHolder)?.slots ?? [cache as? Slot].compactMap { $0 }
            for slot in slots where slot.owner == mine {
                guard case .created = slot.state, let registration = slot.registration as? any Registration else { continue }
                instances.append(ScopeReport.Instance(
                    service: registration.serviceKey, reuse: registration.reuse, creation: slot.creation))
            }
        }
        var provided: [ServiceKey] = []
        var registrations: [ServiceKey] = []
        for (key, local) in locals {
            switch local {
            case .value: provided.append(key)
            case .registration: registrations.append(key)
            }
        }
        return ScopeReport.Node(
            key: key, instances: instances, provided: provided, registrations: registrations, depth: depth)
    }

    /// With ``Container/tracksInstances`` on, the instances this scope (and those below it) cached that are
    /// still alive after it was disposed; empty before it is disposed, and when tracking is off.
    public var survivors: [Survivor] {
        let tracked = registry.lock.withLock { isDisposedValue ? self.tracked : [] }
        // What lock-free readers might have held is released first: only what something else keeps survives.
        if !tracked.isEmpty { Reclamation.reclaimAll() }
        return tracked.compactMap { record in
            guard let instance = record.instance else { return nil }
            return Survivor(service: record.service, type: String(describing: Swift.type(of: instance)))
        }
    }

    /// Throws when any instance this disposed scope cached is still alive: one line in a test, with
    /// ``Container/tracksInstances`` on.
    ///
    /// ```swift
    /// container.tracksInstances = true
    /// let request = container.openScope()
    /// ...
    /// request.dispose()
    /// try request.requireNoSurvivors()
    /// ```
    /// - Throws: ``SurvivorReport`` naming each survivor and its type.
    public func requireNoSurvivors() throws(SurvivorReport) {
        let survivors = survivors
        guard survivors.isEmpty else {
            throw SurvivorReport(scopeKey: key.map { String(reflecting: $0.base) } ?? "root", survivors: survivors)
        }
    }
}

// MARK: - The dependency graph

/// The container's registrations and their dependencies, as a value, as Graphviz DOT and as Mermaid text.
public struct DependencyGraph: Sendable {
    /// A registration.
    public struct Node: Hashable, Sendable {
        public let service: ServiceKey
        public let reuse: Reuse

        public init(service: ServiceKey, reuse: Reuse) {
            self.service = service
            self.reuse = reuse
        }
    }

    /// A dependency: `from`'s factory resolves `to`.
    public struct Edge: Hashable, Sendable {
        public let from: ServiceKey
        public let to: ServiceKey

        public init(from: ServiceKey, to: ServiceKey) {
            self.from = from
            self.to = to
        }
    }

    /// The registrations, in registration order.
    public let nodes: [Node]
    /// The services that edges name but nothing registers: values that scopes `provide`, or missing ones.
    public var external: [ServiceKey] {
        let registered = Set(nodes.map(\.service))
        var seen: Set<ServiceKey> = []
        return (declared + observed).map(\.to).filter { !registered.contains($0) && seen.insert($0).inserted }
    }
    /// The dependencies declared (autowired parameters, `ServiceResolver/dependsOn(_:)-(repeat (each Dependent).Type)`).
    public let declared: [Edge]
    /// The dependencies observed while ``Container/recordsDependencies`` was on (and not declared).
    public let observed: [Edge]
    /// The values that scopes provide (``Container/registerProvided(_:key:)``).
    public let provided: Set<ServiceKey>

    /// Graphviz DOT: `dot -Tsvg graph.dot -o graph.svg`. Declared edges are solid, observed ones dashed;
    /// the shape says the reuse (box: transient, ellipse: cached).
    public var dot: String {
        var lines = ["digraph Stimpak {", "  rankdir=LR;", "  node [fontname=\"Helvetica\"];"]
        let ids = identifiers
        for node in nodes {
            let shape = node.reuse == .transient ? "box" : "ellipse"
            lines.append("  \(ids[node.service]!) [label=\"\(Self.escaped(node.service.description))\\n\(node.reuse)\", shape=\(shape)];")
        }
        for service in external {
            let what = provided.contains(service) ? "provided" : "not registered"
            lines.append("  \(ids[service]!) [label=\"\(Self.escaped(service.description))\\n\(what)\", shape=note, style=dashed];")
        }
        for edge in declared { lines.append("  \(ids[edge.from]!) -> \(ids[edge.to]!);") }
        for edge in observed { lines.append("  \(ids[edge.from]!) -> \(ids[edge.to]!) [style=dashed];") }
        lines.append("}")
        return lines.joined(separator: "\n")
    }

    /// Mermaid flowchart text (GitHub renders it in a ```mermaid block). Observed edges are dotted.
    public var mermaid: String {
        var lines = ["flowchart LR"]
        let ids = identifiers
        for node in nodes {
            lines.append("  \(ids[node.service]!)[\"\(Self.escaped(node.service.description)) \(node.reuse)\"]")
        }
        for service in external {
            let what = provided.contains(service) ? "provided" : "not registered"
            lines.append("  \(ids[service]!)([\"\(Self.escaped(service.description)) (\(what))\"])")
        }
        for edge in declared { lines.append("  \(ids[edge.from]!) --> \(ids[edge.to]!)") }
        for edge in observed { lines.append("  \(ids[edge.from]!) -.-> \(ids[edge.to]!)") }
        return lines.joined(separator: "\n")
    }

    /// `n1`, `n2`… in node order, then the services only edges name (and those that observed edges start from).
    private var identifiers: [ServiceKey: String] {
        var ids: [ServiceKey: String] = [:]
        for service in nodes.map(\.service) + external + observed.map(\.from) where ids[service] == nil {
            ids[service] = "n\(ids.count + 1)"
        }
        return ids
    }

    private static func escaped(_ text: String) -> String {
        text.replacingAll("\"", with: "'")
    }
}

extension String {
    /// The string with every `target` replaced (no Foundation).
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}

extension Container {
    /// Declares that scopes `provide` a value of `type` (a request, a user's session): validation then
    /// accepts it as a dependency of the services resolved from those scopes, and reports it as out of sight
    /// for a singleton; the graph draws it as provided.
    ///
    /// ```swift
    /// container.registerProvided(Request.self)
    /// container.register(Logger.self, reuse: .inScope) { scope in Logger(try scope.require(Request.self)) }
    ///     .dependsOn(Request.self)
    /// try container.requireValid()
    /// ```
    /// - Parameters:
    ///   - type: The type the value is provided as.
    ///   - key: The key it is provided under, or nil.
    public func registerProvided<Service>(_ type: Service.Type, key: AnyHashable? = nil) {
        // Interned before the lock: its `==` is user code.
        guard let declared = registry.keys.intern(ServiceKey(service: Service.self, key: key), adding: true) else { return }
        _ = registry.lock.withLock { registry.declaredProvided.insert(declared) }
    }

    /// The registrations and their dependencies: those declared, known without making anything, and those
    /// observed at run time while ``recordsDependencies`` was on.
    ///
    /// ```swift
    /// try container.dependencyGraph().dot.write(...)   // then: dot -Tsvg graph.dot -o graph.svg
    /// ```
    public func dependencyGraph() -> DependencyGraph {
        registry.lock.withLock {
            let registrations = registry.entries.values.compactMap(\.registration).sorted { $0.index < $1.index }
            let nodes = registrations.map { DependencyGraph.Node(service: $0.serviceKey, reuse: $0.reuse) }
            var declared: [DependencyGraph.Edge] = []
            for registration in registrations {
                for dependency in registration.declaredDependencies ?? [] {
                    declared.append(DependencyGraph.Edge(from: registration.serviceKey, to: dependency.key))
                }
            }
            let known = Set(declared)
            let observed = registry.observedEdges.subtracting(known).sorted {
                ($0.from.description, $0.to.description) < ($1.from.description, $1.to.description)
            }
            return DependencyGraph(nodes: nodes, declared: declared, observed: observed, provided: registry.declaredProvided)
        }
    }
}
