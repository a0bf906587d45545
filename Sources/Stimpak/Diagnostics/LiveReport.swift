#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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
        var nodes = registry.lock.withLock { locked in
            // Depth first without recursion: a chain of scopes may be as deep as a program opens it.
            var nodes: [ScopeReport.Node] = []
            var pending: [(scope: Scope, parent: Int?, depth: Int)] = [(self, nil, 0)]
            while let (scope, parent, depth) = pending.popLast() {
                let place = nodes.count
                nodes.append(scope.reportNode(depth: depth, locked))
                if let parent { nodes[parent].children.append(place) }
                for child in scope.openChildrenInOrder(locked).reversed() { pending.append((child, place, depth + 1)) }
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

    /// This scope in a report, without its children, in no order.
    private func reportNode(depth: Int, _ locked: borrowing Locked) -> ScopeReport.Node {
        let caches: [(cache: AnyObject, kept: ScopeTable.Kept?)] =
            parent == nil
            ? registry.entries.values.compactMap { entry in entry.registration?.rootCacheObject(locked).map { ($0, nil) } }
            // A disposed scope's table may name registrations taken out of use since (only an open scope's are
            // pinned, see `takeOutOfTables`); what it cached is being released.
            : isDisposedValue ? [] : tableCaches(locked)
        var instances: [ScopeReport.Instance] = []
        let mine = ObjectIdentifier(self)
        for (cache, kept) in caches {
            // An instance this scope keeps as it is, without a slot (see `resolveInTable`).
            if let (registration, creation) = kept {
                guard let registration = registration as? any Registration else { continue }
                instances.append(
                    ScopeReport.Instance(
                        service: registration.serviceKey, reuse: registration.reuse, creation: creation))
                continue
            }
            let slots = (cache as? SlotHolder)?.slots ?? [cache as? Slot].compactMap { $0 }
            for slot in slots where slot.owner == mine {
                guard case .created = slot.state, let registration = slot.registration as? any Registration else { continue }
                instances.append(
                    ScopeReport.Instance(
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
        // A scope below disposed while the container's lock was busy shares its instances once detached.
        DeferredDetach.detachAll(waitingFor: registry)
        let tracked = registry.lock.withLock { _ in isDisposedValue ? self.tracked : [] }
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
