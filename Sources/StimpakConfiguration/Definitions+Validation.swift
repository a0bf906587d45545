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
                    problems.append(ConfigurationError(
                        .unknownReference, file: definition.file, path: "services.\(name).arguments[\(position)]",
                        detail: "@\(target) names no parameter and no service"))
                }
            }
        }
        for loop in Self.loops(among: names, services) {
            let first = loop[0]
            problems.append(ConfigurationError(
                .referenceCycle, file: services[first]?.definition.file ?? "", path: "services.\(first)",
                detail: "the services refer to each other in a loop: " + loop.joined(separator: " → ")))
        }
        return problems
    }

    /// The loops of service references, as names that end where they start: one for each reference that
    /// leads back to a service whose references are still being followed.
    ///
    /// One depth-first pass in `names`' order, following each service's references in argument order, with
    /// the path kept in an array rather than on the call stack: each service and each reference is visited
    /// once, whatever the depth.
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
        enum Colour { case unvisited, onPath, finished }
        var colours = [Colour](repeating: .unvisited, count: names.count)
        // Where each service on the path stands in it, for cutting a loop out of the path.
        var positions = [Int](repeating: 0, count: names.count)
        // The services whose references are being followed, each with the index of its next reference.
        var path: [(service: Int, next: Int)] = []
        var loops: [[String]] = []
        for start in names.indices where colours[start] == .unvisited {
            colours[start] = .onPath
            positions[start] = 0
            path.append((start, 0))
            while let (service, next) = path.last {
                guard next < references[service].count else {
                    colours[service] = .finished
                    path.removeLast()
                    continue
                }
                path[path.count - 1].next += 1
                let target = references[service][next]
                switch colours[target] {
                case .unvisited:
                    colours[target] = .onPath
                    positions[target] = path.count
                    path.append((target, 0))
                case .onPath:
                    loops.append(path[positions[target]...].map { names[$0.service] } + [names[target]])
                case .finished:
                    break
                }
            }
        }
        return loops
    }
}
