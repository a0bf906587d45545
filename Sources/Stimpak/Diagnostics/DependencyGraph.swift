#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The container's registrations and their dependencies, as a value, as Graphviz DOT and as Mermaid text.
public struct DependencyGraph: Sendable {
    /// A registration.
    public struct Node: Hashable, Sendable {
        public let service: ServiceKey
        public let reuse: Reuse

        public init(service: ServiceKey, reuse: Reuse) {
            (self.service, self.reuse) = (service, reuse)
        }
    }

    /// A dependency: `from`'s factory resolves `to`.
    public struct Edge: Hashable, Sendable {
        public let from: ServiceKey
        public let to: ServiceKey

        public init(from: ServiceKey, to: ServiceKey) {
            (self.from, self.to) = (from, to)
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
        let body = lines(
            node: { id, label, reuse in
                "  \(id) [label=\"\(label)\\n\(reuse)\", shape=\(reuse == .transient ? "box" : "ellipse")];"
            },
            external: { id, label, what in "  \(id) [label=\"\(label)\\n\(what)\", shape=note, style=dashed];" },
            edge: { from, to, isObserved in "  \(from) -> \(to)\(isObserved ? " [style=dashed]" : "");" })
        return (["digraph Stimpak {", "  rankdir=LR;", "  node [fontname=\"Helvetica\"];"] + body + ["}"])
            .joined(separator: "\n")
    }

    /// Mermaid flowchart text (GitHub renders it in a ```mermaid block). Observed edges are dotted.
    public var mermaid: String {
        let body = lines(
            node: { id, label, reuse in "  \(id)[\"\(label) \(reuse)\"]" },
            external: { id, label, what in "  \(id)([\"\(label) (\(what))\"])" },
            edge: { from, to, isObserved in "  \(from) \(isObserved ? "-.->" : "-->") \(to)" })
        return (["flowchart LR"] + body).joined(separator: "\n")
    }

    /// One line per node, per service that is depended on but not registered (provided or missing), and per
    /// edge, declared then observed, in the notation the closures write; labels are escaped for both.
    private func lines(
        node: (_ id: String, _ label: String, _ reuse: Reuse) -> String,
        external: (_ id: String, _ label: String, _ what: String) -> String,
        edge: (_ from: String, _ to: String, _ isObserved: Bool) -> String
    ) -> [String] {
        let ids = identifiers
        var lines: [String] = []
        for entry in nodes {
            lines.append(node(ids[entry.service]!, Self.escaped(entry.service.description), entry.reuse))
        }
        for service in self.external {
            let what = provided.contains(service) ? "provided" : "not registered"
            lines.append(external(ids[service]!, Self.escaped(service.description), what))
        }
        for declaredEdge in declared { lines.append(edge(ids[declaredEdge.from]!, ids[declaredEdge.to]!, false)) }
        for observedEdge in observed { lines.append(edge(ids[observedEdge.from]!, ids[observedEdge.to]!, true)) }
        return lines
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
        guard let declared = registry.intern(ServiceKey(service: Service.self, key: key), adding: true) else { return }
        _ = registry.lock.withLock { _ in registry.declaredProvided.insert(declared) }
    }

    /// The registrations and their dependencies: those declared, known without making anything, and those
    /// observed at run time while ``recordsDependencies`` was on.
    ///
    /// ```swift
    /// try container.dependencyGraph().dot.write(...)   // then: dot -Tsvg graph.dot -o graph.svg
    /// ```
    public func dependencyGraph() -> DependencyGraph {
        registry.lock.withLock { locked in
            let registrations = registry.entries.values.compactMap(\.registration).sorted { $0.index < $1.index }
            let nodes = registrations.map { DependencyGraph.Node(service: $0.serviceKey, reuse: $0.reuse) }
            var declared: [DependencyGraph.Edge] = []
            for registration in registrations {
                for dependency in registration.declaredDependencies(locked) ?? [] {
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
