/// Validation of the whole container at once (DryIoc's `Validate`): every problem, not the first.
extension Container {
    /// Checks every registration of the container without making anything, and returns every problem found.
    ///
    /// ```swift
    /// let report = container.validate()
    /// for problem in report.problems { print(problem) }   // each with its path and the fix
    /// ```
    /// It follows the dependencies known without making an instance: an autowired registration's parameters,
    /// and what a factory declared with `ServiceResolver/dependsOn(_:)-(repeat (each Dependent).Type)`. It
    /// reports a missing dependency (naming what is registered under other keys or arguments), a cycle, a
    /// captive dependency, a `Disposable` transient nobody disposes, an async service that a synchronous
    /// factory resolves or that a property wrapper, `Lazy`, `Provider` or `WeakReference` resolves (they resolve
    /// synchronously, whatever the factory: declare an instance's wrappers with `.dependsOn(Injected<Feed>.self)`),
    /// a `.weak` registration of a value type, an eager singleton that takes arguments, and a registration made
    /// after the container was disposed. Registrations whose factory declared nothing are
    /// listed in ``ValidationReport/unchecked``: ``validateByResolving()`` covers them.
    /// - Returns: The problems, in registration order.
    public func validate() -> ValidationReport {
        let snapshot = registry.lock.withLock { locked in ValidationSnapshot(registry, locked) }
        return snapshot.report()
    }

    /// Makes every registration without runtime arguments in a throwaway copy of the container and of its
    /// open scopes (their keys, `provide`d values and registrations), which is disposed afterwards, and
    /// returns ``validate()``'s problems plus the registrations that could not be resolved in any of those
    /// scopes.
    ///
    /// The copy has the same registrations, factories and settings; nothing is made in this container or
    /// its scopes. Factories run, so their side effects (a network call, a file opened) happen: use it in a
    /// test. A registration that needs a scope that is not open (a request scope with the request provided)
    /// is reported unless such a scope is open when it runs. A registration whose instance ``validate()`` finds a
    /// property wrapper of an `async` service in, and one that declares a dependency on it, is not made: the
    /// wrapper would stop the program.
    /// - Returns: The problems.
    public func validateByResolving() async -> ValidationReport {
        let snapshot = registry.lock.withLock { locked in ValidationSnapshot(registry, locked) }
        var report = snapshot.report()
        // Making these would stop the program (a property wrapper of an async service): already reported.
        let stopping = snapshot.stopping(given: report.problems)
        // Its keys are this container's: interned once, for both.
        let copy = Container(registry: Registry(defaultReuse: defaultReuse, waitLimit: waitLimit, keysOf: registry))
        // Read under this container's lock, installed under the copy's: never both locks at once.
        let (registrations, copies, scopes, decorators) = registry.lock.withLock { locked in
            let registrations = registry.entries.values.compactMap(\.registration).sorted { $0.index < $1.index }
            let copies = registrations.map { $0.copy(locked) }
            return (registrations, copies, root.copyOfOpenScopes(locked), registry.decorators)
        }
        copy.registry.change { locked in
            for copied in copies {
                let duplicate = copied.register(in: copy.registry, index: copy.registry.makeIndex(locked), locked)
                copy.registry.entries[duplicate.serviceKey, default: Registry.Entry()].registration = duplicate
            }
            copy.registry.decorators = decorators
        }
        let copiedScopes = [copy.root] + ScopeCopy.open(scopes, in: copy.root)
        var failed: [ServiceKey: ResolutionError] = [:]
        for registration in registrations
        where !registration.serviceKey.hasArguments && !stopping.contains(registration.serviceKey) {
            var lastError: ResolutionError?
            for scope in copiedScopes.reversed() {
                do {
                    // Bound as the current scope, so that a factory's `inject` and property wrappers resolve
                    // from the copy too, not from `Container.default`.
                    try await scope.withCurrent { try await registration.resolveAsync(from: scope) }
                    lastError = nil
                    break
                } catch let error as ResolutionError {
                    lastError = error
                } catch {
                    lastError = ResolutionError(.factoryFailed, requested: registration.serviceKey, underlyingError: error)
                }
            }
            if let lastError { failed[registration.serviceKey] = lastError }
        }
        await copy.dispose()
        // A failure `validate()` already reported (the same problem of the same service) is not repeated; a
        // different problem of that service is.
        let known = Set(report.problems.map { KnownProblem(code: $0.code, service: $0.requested) })
        for registration in registrations {
            if let error = failed[registration.serviceKey],
                !known.contains(KnownProblem(code: error.code, service: error.requested))
            {
                report.problems.append(error)
            }
        }
        report.resolved = true
        return report
    }

    /// Throws a ``ValidationReport`` listing every problem ``validate()`` finds: one line in a test.
    ///
    /// ```swift
    /// @Test func registrationsAreValid() throws {
    ///     try App.container.requireValid()   // fails with every problem listed
    /// }
    /// ```
    /// - Throws: ``ValidationReport`` when there is any problem.
    public func requireValid() throws(ValidationReport) {
        let report = validate()
        if !report.problems.isEmpty { throw report }
    }
}

/// What ``Container/validate()`` found: every problem, each a ``ResolutionError`` with its path and fix.
public struct ValidationReport: Error, Sendable, CustomStringConvertible {
    /// The problems, in registration order.
    public internal(set) var problems: [ResolutionError]
    /// The registrations whose dependencies are unknown without making them (a closure factory that
    /// declared none), so the static check could not follow them.
    public let unchecked: [ServiceKey]
    /// Whether ``Container/validateByResolving()`` made the registrations too.
    public internal(set) var resolved = false

    /// Whether no problem was found.
    public var isValid: Bool { problems.isEmpty }

    public var description: String {
        guard !problems.isEmpty else {
            return "Stimpak found no problem in the container's registrations"
                + (unchecked.isEmpty ? "." : " (\(unchecked.count) not checked: their factories declare no dependencies).")
        }
        var text = "Stimpak found \(problems.count) problem\(problems.count == 1 ? "" : "s") in the container's registrations:"
        for (number, problem) in problems.enumerated() { text += "\n\(number + 1). \(problem.description)" }
        if !unchecked.isEmpty && !resolved {
            text += "\nNot checked (no declared dependencies; declare them with .dependsOn(...) or run validateByResolving()): "
            text += unchecked.map(\.description).joined(separator: ", ") + "."
        }
        return text
    }
}

/// A copy of an open scope's key, `provide`d values and registrations, in a list of copies where its parent
/// comes before it.
struct ScopeCopy {
    /// A `provide`d value, as it is, or a registration's settings, read under the original container's lock.
    enum LocalCopy {
        case value(Any)
        case registration(any RegistrationCopy)
    }

    let key: AnyHashable
    /// How the scope was opened: two own scopes with equal keys are copied as two.
    let sharing: ScopeSharing
    let locals: [ServiceKey: LocalCopy]
    /// The parent's place in the list; nil for a child of the root.
    let parent: Int?

    /// Opens `copies` below `root`, each below its parent's copy, and returns the scopes opened, in the order
    /// of `copies`.
    static func open(_ copies: [ScopeCopy], in root: Scope) -> [Scope] {
        var opened: [Scope] = []
        opened.reserveCapacity(copies.count)
        for copy in copies {
            let scope = (copy.parent.map { opened[$0] } ?? root).openScope(copy.key, sharing: copy.sharing)
            scope.adopt(copy.locals)
            opened.append(scope)
        }
        return opened
    }
}

/// The registrations as validation reads them, taken under the lock.
struct ValidationSnapshot {
    struct Node {
        let key: ServiceKey
        let index: Int
        let reuse: Reuse
        let dependencies: [Dependency]?
        let isAsync: Bool
        let allowsCaptiveDependencies: Bool
        let findings: [ResolutionError]
    }

    let nodes: [Node]
    let byKey: [ServiceKey: Node]
    /// Keys that some scope provides a value or a registration for, or that are declared provided.
    let scopeLocalKeys: Set<ServiceKey>
    /// The registered keys of each service type, in no order (sorted when a message needs them: a key's
    /// description may be user code, which does not run under the lock).
    let alternatives: [ObjectIdentifier: [ServiceKey]]
    let rejected: [ServiceKey]

    init(_ registry: Registry, _ locked: borrowing Locked) {
        var nodes: [Node] = []
        var alternatives: [ObjectIdentifier: [ServiceKey]] = [:]
        var scopeLocalKeys = registry.declaredProvided
        for (key, entry) in registry.entries {
            if entry.hasScopeLocals { scopeLocalKeys.insert(key) }
            guard let registration = entry.registration else { continue }
            alternatives[ObjectIdentifier(key.service), default: []].append(key)
            nodes.append(
                Node(
                    key: key, index: registration.index, reuse: registration.reuse,
                    dependencies: registration.declaredDependencies(locked), isAsync: registration.isAsync,
                    allowsCaptiveDependencies: registration.allowsCaptiveDependencies,
                    findings: registration.registrationFindings(locked)))
        }
        nodes.sort { $0.index < $1.index }
        self.nodes = nodes
        byKey = Dictionary(uniqueKeysWithValues: nodes.map { ($0.key, $0) })
        self.scopeLocalKeys = scopeLocalKeys
        self.alternatives = alternatives
        rejected = registry.rejectedRegistrations
    }

    func report() -> ValidationReport {
        var problems: [ResolutionError] = []
        for key in rejected {
            problems.append(ResolutionError(.registeredAfterDisposal, requested: key))
        }
        let cycles = cycles()
        var sortedAlternatives: [ObjectIdentifier: [ServiceKey]] = [:]
        for (place, node) in nodes.enumerated() {
            problems.append(contentsOf: node.findings)
            guard let dependencies = node.dependencies else { continue }
            for dependency in dependencies {
                if let problem = missing(dependency, of: node, sortedAlternatives: &sortedAlternatives) {
                    problems.append(problem)
                }
                guard let target = byKey[dependency.key], target.isAsync else { continue }
                if let use = dependency.synchronousUse {
                    // A property wrapper or a `Lazy` resolves synchronously, even for an async factory's instance.
                    var error = ResolutionError(.requiresAwait, requested: target.key, path: [node.key, target.key])
                    error.synchronousUse = use
                    problems.append(error)
                } else if !node.isAsync, dependency.kind == .required || dependency.kind == .optional {
                    // An optional parameter is nil only when its service is not registered: an async one still fails.
                    problems.append(ResolutionError(.requiresAwait, requested: target.key, path: [node.key, target.key]))
                }
            }
            for cycle in cycles[place] {
                problems.append(ResolutionError(.dependencyCycle, requested: node.key, path: cycle))
            }
            if let captive = captive(from: node) { problems.append(captive) }
        }
        let unchecked = nodes.filter { $0.dependencies == nil }.map(\.key)
        return ValidationReport(problems: problems, unchecked: unchecked)
    }

    /// The registrations whose making would stop the program: those whose instance has a property wrapper of an
    /// `async` service (`problems` says which), and those whose required or optional dependencies reach one.
    func stopping(given problems: [ResolutionError]) -> Set<ServiceKey> {
        var stopping = Set(
            problems.compactMap { problem -> ServiceKey? in
                guard problem.code == .requiresAwait, problem.synchronousUse?.hasPrefix("@") == true else { return nil }
                return problem.path.first
            })
        guard !stopping.isEmpty else { return [] }
        // Their dependents, until none is added: one pass per level of the longest chain.
        var added = true
        while added {
            added = false
            for node in nodes where !stopping.contains(node.key) {
                let reaches = (node.dependencies ?? []).contains { dependency in
                    (dependency.kind == .required || dependency.kind == .optional) && stopping.contains(dependency.key)
                }
                if reaches {
                    stopping.insert(node.key)
                    added = true
                }
            }
        }
        return stopping
    }

    /// The error for a dependency that nothing satisfies, or nil.
    /// - Parameter sortedAlternatives: The registered keys of each service type already sorted by description.
    private func missing(
        _ dependency: Dependency, of node: Node, sortedAlternatives: inout [ObjectIdentifier: [ServiceKey]]
    ) -> ResolutionError? {
        guard dependency.kind != .optional, dependency.kind != .collection, byKey[dependency.key] == nil else { return nil }
        let path = [node.key, dependency.key]
        if scopeLocalKeys.contains(dependency.key) {
            // Provided (or registered) in some scope: fine for a service resolved from there; not for one made
            // by the root for the whole container.
            guard node.reuse.isContainerWide else { return nil }
            var error = ResolutionError(.notRegistered, requested: dependency.key, path: path)
            error.isProvidedElsewhere = true
            error.resolvedFromRoot = true
            return error
        }
        var error = ResolutionError(.notRegistered, requested: dependency.key, path: path)
        let service = ObjectIdentifier(dependency.key.service)
        if sortedAlternatives[service] == nil {
            // Each description made once: a type may have thousands of keys.
            sortedAlternatives[service] = (alternatives[service] ?? [])
                .map { (description: $0.description, key: $0) }
                .sorted { $0.description < $1.description }
                .map(\.key)
        }
        error.registeredAlternatives = sortedAlternatives[service] ?? []
        return error
    }

    /// The cycles of required (and optional) dependencies, each as a path that ends where it starts, listed
    /// under the place in `nodes` of the service it starts at: one for each dependency that leads back to a
    /// service whose dependencies are still being followed.
    /// Registrations are followed in registration order, dependencies in declared order (see ``CycleSearch``).
    private func cycles() -> [[[ServiceKey]]] {
        let places = Dictionary(uniqueKeysWithValues: nodes.enumerated().map { ($1.key, $0) })
        // Each service's distinct dependencies on registered services, by place.
        let edges: [[Int]] = nodes.map { node in
            var seen: Set<Int> = []
            return (node.dependencies ?? []).compactMap { dependency in
                guard dependency.kind == .required || dependency.kind == .optional,
                    let place = places[dependency.key], seen.insert(place).inserted
                else { return nil }
                return place
            }
        }
        var cycles = [[[ServiceKey]]](repeating: [], count: nodes.count)
        for cycle in CycleSearch.cycles(edges: edges) {
            cycles[cycle[cycle.count - 1]].append(cycle.map { nodes[$0].key })
        }
        return cycles
    }

    /// A captive dependency of a container-wide `start`: a scoped service it reaches through transients.
    ///
    /// Depth first in dependency order, with the path kept in an array rather than on the call stack, and
    /// copied only for the error: a chain of any length costs no stack and linear memory.
    private func captive(from start: Node) -> ResolutionError? {
        guard start.reuse.isContainerWide, !start.allowsCaptiveDependencies else {
            return nil
        }
        var visited: Set<ServiceKey> = [start.key]
        // The services from `start` to the one being followed, each with the index of its next dependency.
        var path: [(node: Node, next: Int)] = [(start, 0)]
        while let (node, next) = path.last {
            let dependencies = node.dependencies ?? []
            guard next < dependencies.count else {
                path.removeLast()
                continue
            }
            path[path.count - 1].next += 1
            let dependency = dependencies[next]
            guard dependency.kind == .required || dependency.kind == .optional,
                let target = byKey[dependency.key], visited.insert(target.key).inserted
            else { continue }
            switch target.reuse.kind {
            case .inScope, .scopedTo:
                var error = ResolutionError(
                    .captiveDependency, requested: target.key, path: path.map(\.node.key) + [target.key])
                error.reuse = target.reuse
                error.captor = start.key
                error.captorReuse = start.reuse
                return error
            case .transient, .graph:
                path.append((target, 0))
            case .singleton, .weak:
                break
            }
        }
        return nil
    }

}

/// A problem's code and service, to tell whether ``Container/validateByResolving()`` found one already reported.
private struct KnownProblem: Hashable {
    let code: ResolutionError.Code
    let service: ServiceKey
}
