import Stimpak

extension Definitions {
    /// Every problem of the definitions as they stand (files and providers together), without making anything:
    /// references to nothing, reference cycles (named), services whose arguments refer to them... Empty when
    /// all is well.
    ///
    /// It takes time linear in the services and their arguments, and no stack per reference: a chain of
    /// thousands of services validates as fast as it loads.
    public func validate() -> [ConfigurationError] {
        let (parameters, services) = namespace.withLock { parameters, services in (parameters, services) }
        let names = services.keys.sorted()
        var problems: [ConfigurationError] = []
        for name in names {
            guard let definition = services[name]?.definition else { continue }
            for (position, argument) in definition.arguments.enumerated() {
                guard case .reference(let target) = argument else { continue }
                if services[target] == nil && parameters[target] == nil {
                    problems.append(
                        ConfigurationError(
                            .unknownReference, file: definition.file, path: "services.\(name).arguments[\(position)]",
                            detail: "@\(target) names no parameter and no service"))
                }
            }
        }
        for loop in Self.loops(among: names, services) {
            let first = loop[0]
            problems.append(
                ConfigurationError(
                    .referenceCycle, file: services[first]?.definition.file ?? "", path: "services.\(first)",
                    detail: "the services refer to each other in a loop: " + loop.joined(separator: " → ")))
        }
        return problems
    }

    /// The loops of service references, as names that end where they start: one for each reference that
    /// leads back to a service whose references are still being followed.
    /// Services are followed in `names`' order, references in argument order (see ``CycleSearch``).
    static func loops(among names: [String], _ services: [String: DefinitionNamespace.Record]) -> [[String]] {
        let numbers = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) })
        // Each service's distinct references to services (a parameter is no link of a loop), by number.
        let references: [[Int]] = names.map { name in
            var seen: Set<Int> = []
            return (services[name]?.definition.arguments ?? []).compactMap { argument in
                guard case .reference(let target) = argument, let number = numbers[target],
                    seen.insert(number).inserted
                else { return nil }
                return number
            }
        }
        return CycleSearch.cycles(edges: references).map { loop in loop.map { names[$0] } }
    }
}
