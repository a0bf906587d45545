import Testing
import Stimpak

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Bound providers called from 7 threads while an eighth changes the world under them: unregister and
/// re-register, `.replace`, scope disposal, container disposal and release. A call runs without a read section,
/// on the references its binding holds, so a freed instance or factory shows as a crash or as a dead `Canary`.
///
/// In the release stress suite (`swift test -c release --filter StressTests`), like ``StressTests``.
@Suite(.serialized) struct ProviderStressTests {
    #if DEBUG
    static let seconds = 0.3
    #else
    static let seconds = 1.0
    #endif
    static let readers = 7

    /// The bound routes: a transient's factory, a singleton's and a scoped instance, a factory with arguments.
    enum Route: String, CaseIterable, Sendable, CustomStringConvertible {
        case transient, singleton, inScope, arguments
        var description: String { rawValue }

        var reuse: Reuse {
            switch self {
            case .transient, .arguments: .transient
            case .singleton: .singleton
            case .inScope: .inScope
            }
        }

        func register(_ container: Container, replacing: Bool = false) {
            switch (self, replacing) {
            case (.arguments, false):
                container.register(Canary.self, reuse: reuse) { (_: String, _: Int) in Canary() }
            case (.arguments, true):
                container.register(Canary.self, reuse: reuse, ifAlreadyRegistered: .replace) { (_: String, _: Int) in Canary() }
            case (_, false):
                container.register(Canary.self, reuse: reuse) { Canary() }
            case (_, true):
                container.register(Canary.self, reuse: reuse, ifAlreadyRegistered: .replace) { Canary() }
            }
        }

        func unregister(_ container: Container) {
            switch self {
            case .arguments: container.unregister(Canary.self, arguments: (String, Int).self)
            default: container.unregister(Canary.self)
            }
        }

        /// A call of a provider made in `scope`, as a closure that holds the provider.
        func provider(in scope: Scope) -> @Sendable () -> Canary? {
            switch self {
            case .arguments:
                let make = scope.provider(Canary.self, arguments: (String, Int).self)
                return { try? make(("a", 1)) }
            default:
                let make = scope.provider(Canary.self)
                return { try? make() }
            }
        }
    }

    @Test(arguments: Route.allCases)
    func providerCallsRaceUnregisterRegisterAndReplace(route: Route) {
        let container = Container()
        route.register(container)
        let scope = container.openScope("request")
        // Made before any change: each change leaves them unbound, resolving as `require` does.
        let early = (route.provider(in: container.root), route.provider(in: scope))
        let current = Shared((early.0, early.1))
        let round = Shared(0)
        let health = Health()
        race(health: health) { tally in
            let (root, child) = current.value
            for _ in 0..<50 {
                if route != .inScope { tally.check(root()) }
                tally.check(child())
                tally.check(early.1())
            }
        } write: {
            round.value += 1
            if round.value % 2 == 0 {
                route.unregister(container)
                route.register(container)
            } else {
                route.register(container, replacing: true)
            }
            // Bound to the registration just made.
            current.value = (route.provider(in: container.root), route.provider(in: scope))
        }
        health.expectHealthy()
    }

    @Test(arguments: Route.allCases)
    func providerCallsRaceScopeDisposal(route: Route) {
        let container = Container()
        route.register(container)
        let first = container.openScope(0)
        let current = Shared((first, route.provider(in: first)))
        let health = Health()
        race(health: health) { tally in
            let (_, call) = current.value
            for _ in 0..<100 { tally.check(call()) }
        } write: {
            let (scope, _) = current.value
            let next = container.openScope(Int.random(in: 1..<1_000_000))
            let call = route.provider(in: next)
            _ = call()
            current.value = (next, call)
            scope.dispose()
        }
        health.expectHealthy()
    }

    @Test(arguments: Route.allCases)
    func providerCallsRaceContainerDisposalAndRelease(route: Route) {
        @Sendable func make() -> (Container, @Sendable () -> Canary?, @Sendable () -> Canary?) {
            let container = Container()
            route.register(container)
            let scope = container.openScope("request")
            let calls = (route.provider(in: container.root), route.provider(in: scope))
            _ = calls.0()
            _ = calls.1()
            return (container, calls.0, calls.1)
        }
        // Readers hold only the providers; the writer holds the only reference to their container.
        let current = Shared(make())
        let round = Shared(0)
        let health = Health()
        race(health: health) { tally in
            let (_, root, child) = current.value
            for _ in 0..<100 {
                if route != .inScope { tally.check(root()) }
                tally.check(child())
            }
        } write: {
            let old = current.value
            current.value = make()
            round.value += 1
            // Alternately disposed then released, and released without being disposed.
            if round.value % 2 == 0 { old.0.dispose() }
        }
        health.expectHealthy()
    }

    /// A singleton's first creation still under way when `.replace` retires its registration: the creator keeps
    /// the instance in the slot it holds alone, and publishes it in no root word, where a provider bound to the
    /// retired registration (its check passed just before the change) would load it after its release.
    @Test func creationsUnderWayRaceReplace() {
        let container = Container()
        @Sendable func register() {
            container.register(Canary.self, reuse: .singleton, ifAlreadyRegistered: .replace) {
                // Long enough for the writer to replace the registration while it runs.
                _ = busy(Int.random(in: 0..<2_000))
                return Canary()
            }
        }
        register()
        let current = Shared(container.provider(Canary.self))
        let health = Health()
        race(health: health) { tally in
            let call = current.value
            for _ in 0..<20 { tally.check(try? call()) }
        } write: {
            register()
            current.value = container.provider(Canary.self)
            _ = busy(Int.random(in: 0..<2_000))
        }
        health.expectHealthy()
    }

    /// Runs `read` on ``readers`` threads and `write` on one more, over and over, for ``seconds``, and on until
    /// some reader's call has succeeded (within a minute): on a loaded machine, the readers may not be scheduled
    /// between two writes in the first ``seconds``, and a race in which every call failed proves nothing.
    func race(health: Health, read: @escaping @Sendable (inout Tally) -> Void, write: @escaping @Sendable () -> Void) {
        let stop = Shared(false)
        let someResolved = Shared(false)
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: .milliseconds(Int(Self.seconds * 1_000)))
        let limit = clock.now.advanced(by: .seconds(60))
        hammer(threads: Self.readers + 1) { index in
            if index == Self.readers {
                while clock.now < end || (!someResolved.value && clock.now < limit) { write() }
                stop.value = true
            } else {
                var tally = Tally()
                var reported = false
                while !stop.value {
                    read(&tally)
                    if !reported, tally.resolved > 0 {
                        someResolved.value = true
                        reported = true
                    }
                }
                health.add(tally)
            }
        }
    }
}

/// Work that takes about `iterations` nanoseconds, out of the optimizer's sight.
@inline(never)
private func busy(_ iterations: Int) -> Int {
    var value = 0
    for index in 0..<iterations { value = value &* 31 &+ index }
    return value
}
