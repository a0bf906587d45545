import Stimpak

extension Definitions {
    /// Every problem of the definitions as they stand (files and providers together), without making anything:
    /// references to nothing, reference cycles (named), services whose arguments refer to them... Empty when
    /// all is well.
    public func validate() -> [ConfigurationError] {
        let (parameters, services) = namespace.withLock { parameters, services in (parameters, services) }
        var problems: [ConfigurationError] = []
        for (name, record) in services.sorted(by: { $0.key < $1.key }) {
            for (position, argument) in record.definition.arguments.enumerated() {
                guard case .reference(let target) = argument else { continue }
                if services[target] == nil && parameters[target] == nil {
                    problems.append(ConfigurationError(
                        .unknownReference, file: record.definition.file, path: "services.\(name).arguments[\(position)]",
                        detail: "@\(target) names no parameter and no service"))
                }
            }
        }
        var reported: Set<String> = []
        for name in services.keys.sorted() {
            if let cycle = Self.cycle(from: name, in: services), reported.insert(Set(cycle).sorted().joined(separator: "\u{0}")).inserted {
                let definition = services[name]!.definition
                problems.append(ConfigurationError(
                    .referenceCycle, file: definition.file, path: "services.\(name)",
                    detail: "the services refer to each other in a loop: " + cycle.joined(separator: " → ")))
            }
        }
        return problems
    }

    /// A loop of service references through `start`, as names ending where they start, or nil.
    private static func cycle(from start: String, in services: [String: DefinitionNamespace.Record]) -> [String]? {
        var path = [start]
        var visited: Set<String> = []
        func visit(_ name: String) -> Bool {
            for case .reference(let target) in services[name]?.definition.arguments ?? [] {
                guard services[target] != nil else { continue }
                if target == start {
                    path.append(target)
                    return true
                }
                guard visited.insert(target).inserted else { continue }
                path.append(target)
                if visit(target) { return true }
                path.removeLast()
            }
            return false
        }
        return visit(start) ? path : nil
    }
}
