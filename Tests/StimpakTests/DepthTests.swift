import Stimpak
import Testing

/// What user input can make arbitrarily deep (a chain of open scopes, a chain of declared dependencies) is
/// walked without recursion: each test below overflows the stack of a debug build when a walk recurses once
/// per level.
@Suite struct DepthTests {
    static let depth = 50_000

    /// A chain of `depth` open scopes below the root, and the deepest one.
    static func chain(in container: Container, depth: Int = Self.depth) -> (top: Scope, deepest: Scope) {
        let top = container.openScope(0)
        var scope = top
        for level in 1..<depth { scope = scope.openScope(level) }
        return (top, scope)
    }

    @Test("report() and its description on a 50,000-deep chain of scopes")
    func reportOfADeepChain() {
        let container = Container()
        container.register(Int.self, reuse: .inScope) { 7 }
        let (top, deepest) = Self.chain(in: container)
        deepest.provide("request")
        _ = deepest.resolve(Int.self)
        let report = container.root.report()
        #expect(report.totalScopes == Self.depth)
        #expect(report.totalInstances == 1)
        var last = report
        var levels = 0
        while let child = last.children.first {
            last = child
            levels += 1
        }
        #expect(levels == Self.depth)
        #expect(last.provided.map(\.description) == [ServiceKey(service: String.self).description])
        let lines = report.description.split(separator: "\n")
        // root, each scope, the deepest scope's instance and its provided value.
        #expect(lines.count == 1 + Self.depth + 2)
        // Indented 32 levels at most, then the level is named: the text grows with the chain's length.
        let indent = String(repeating: "  ", count: 32)
        #expect(lines[32].hasPrefix(indent + "scope 31: "))
        #expect(lines[Self.depth].hasPrefix(indent + "[level \(Self.depth)] scope \(Self.depth - 1): 1 cached, 0 open below"))
        #expect(lines.last == Substring(indent + "  - provided String"))
        top.dispose()
    }

    @Test("validateByResolving copies a 50,000-deep chain of open scopes and resolves in its deepest scope")
    func validateByResolvingWithADeepChain() async {
        let container = Container()
        container.register(Int.self, reuse: .inScope) { scope in (try scope.require(String.self)).count }
        let (top, deepest) = Self.chain(in: container)
        deepest.provide("request")
        let report = await container.validateByResolving()
        #expect(report.isValid, "\(report)")
        #expect(container.root.report().totalInstances == 0, "nothing is made in the container itself")
        await top.dispose()
    }

    /// A node of a chain of declared dependencies: `Link` under key `n` depends on `Link` under `n + 1`.
    struct Link {}

    /// `Link` 0 … `depth - 1`, each depending on the next: 0 a singleton, the last `.inScope` (or, with
    /// `loops`, a transient depending on 0), the others transients.
    static func linkChain(loops: Bool) -> Container {
        let container = Container()
        let last = Self.depth - 1
        container.register(Link.self, reuse: .singleton, key: 0) { Link() }
            .dependsOn(ServiceKey(service: Link.self, key: 1))
        for index in 1..<last {
            container.register(Link.self, reuse: .transient, key: index) { Link() }
                .dependsOn(ServiceKey(service: Link.self, key: index + 1))
        }
        if loops {
            container.register(Link.self, reuse: .transient, key: last) { Link() }
                .dependsOn(ServiceKey(service: Link.self, key: 0))
        } else {
            container.register(Link.self, reuse: .inScope, key: last) { Link() }
        }
        return container
    }

    @Test("validate() finds a captive dependency at the end of a 50,000-long chain of transients")
    func captiveAtTheEndOfALongChain() {
        let last = Self.depth - 1
        let problems = Self.linkChain(loops: false).validate().problems
        #expect(problems.map(\.code) == [.captiveDependency])
        let captive = problems.first
        #expect(captive?.path.count == Self.depth)
        #expect(captive?.path.first == ServiceKey(service: Link.self, key: 0))
        #expect(captive?.path.last == ServiceKey(service: Link.self, key: last))
    }

    @Test("validate() reports a 50,000-long cycle once, with its whole path")
    func longCycleIsReportedOnce() {
        let problems = Self.linkChain(loops: true).validate().problems
        #expect(problems.map(\.code) == [.dependencyCycle])
        let cycle = problems.first?.path ?? []
        #expect(cycle.count == Self.depth + 1)
        #expect(cycle.first == ServiceKey(service: Link.self, key: 0))
        #expect(cycle.dropFirst().first == ServiceKey(service: Link.self, key: 1))
        #expect(cycle.last == ServiceKey(service: Link.self, key: 0))
    }
}
