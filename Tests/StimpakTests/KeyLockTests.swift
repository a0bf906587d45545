import Testing
import Stimpak

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A key's `==` and `hash` are user code: none runs under the container's lock. A key that checks, each time
/// it is compared or hashed, whether another thread can take the container's lock meanwhile, driven through
/// every call that takes a key.
@Suite struct KeyLockTests {
    /// Sees whether the container's lock is free: another thread asks the container something that takes it.
    final class LockProbe: Sendable {
        let container = Shared<Container?>(nil)
        let calls = Counter()
        let underLock = Counter()

        func check() {
            guard let container = container.value else { return }
            calls.increment()
            let answered = Signal()
            detach {
                _ = container.isRegistered(Foo.self)
                answered.fire()
            }
            // Free, it answers in microseconds; held by this thread, not before this call returns.
            if !answered.wait(seconds: 5) { underLock.increment() }
        }
    }

    /// Equal by `id`, with one hash for every id, so that every key of the type is a candidate for every other.
    struct ProbingKey: Hashable, @unchecked Sendable {
        let id: Int
        let probe: LockProbe

        static func == (left: Self, right: Self) -> Bool {
            left.probe.check()
            return left.id == right.id
        }

        func hash(into hasher: inout Hasher) {
            probe.check()
            hasher.combine(0)
        }
    }

    final class Service: Sendable {
        let name: String
        init(_ name: String) { self.name = name }
    }

    @Test func containerCallsWithAKeyCompareItWithoutTheLock() async throws {
        let probe = LockProbe()
        let container = Container()
        probe.container.value = container
        try Self.exercise(container, probe: probe)
        // The async resolve's locked path.
        #expect(try await container.require(Service.self, key: ProbingKey(id: 1, probe: probe)).name == "one again decorated")
        // Validation's throwaway copy keeps the keys.
        let report = await container.validateByResolving()
        #expect(report.problems.allSatisfy { $0.code != .dependencyCycle })

        await container.dispose()
        probe.container.value = nil
        #expect(probe.calls.value > 20, "the keys were compared and hashed: \(probe.calls.value) times")
        #expect(probe.underLock.value == 0, "a key's == or hash ran with the container's lock held")
    }

    /// Every synchronous call that takes a key.
    static func exercise(_ container: Container, probe: LockProbe) throws {
        let one = ProbingKey(id: 1, probe: probe)
        let two = ProbingKey(id: 2, probe: probe)
        let again = ProbingKey(id: 1, probe: probe)

        container.register(Service.self, key: one) { Service("one") }
        container.register(Service.self, key: two) { Service("two") }
        container.register(Service.self, key: again, ifAlreadyRegistered: .replace) { Service("one again") }
        #expect(container.isRegistered(Service.self, key: again))
        #expect(!container.isRegistered(Service.self, key: ProbingKey(id: 3, probe: probe)))
        // The first resolves take the locked path (no table is published yet), and every resolve does while an
        // observer is set.
        #expect(try container.require(Service.self, key: again).name == "one again")
        container.decorate(Service.self, key: one) { _, inner in Service(inner.name + " decorated") }
        struct Quiet: ResolutionObserver {}
        container.observer = Quiet()
        #expect(try container.require(Service.self, key: ProbingKey(id: 1, probe: probe)).name == "one again decorated")
        #expect(try container.require(Service.self, key: two).name == "two")
        #expect(throws: ResolutionError.self) { try container.require(Service.self, key: ProbingKey(id: 4, probe: probe)) }
        container.observer = nil

        // Dependencies recorded from a factory that resolves by key.
        container.recordsDependencies = true
        container.register(Foo.self) { scope in
            _ = try scope.require(Service.self, key: ProbingKey(id: 2, probe: probe))
            _ = scope.resolve(Service.self, key: ProbingKey(id: 5, probe: probe))
            return Foo()
        }
        _ = try container.require(Foo.self)
        container.recordsDependencies = false
        #expect(container.unregister(Service.self, key: ProbingKey(id: 2, probe: probe)))
        #expect(!container.unregister(Service.self, key: ProbingKey(id: 2, probe: probe)))
        container.registerProvided(Service.self, key: ProbingKey(id: 6, probe: probe))

        // Scopes: keys of scopes, and values provided and registered in a scope under a key.
        let scope = container.openScope(ProbingKey(id: 10, probe: probe))
        #expect(container.openScope(ProbingKey(id: 10, probe: probe)) === scope)
        #expect(container.openScope(ProbingKey(id: 11, probe: probe)) !== scope)
        #expect(container[ProbingKey(id: 10, probe: probe)] === scope)
        #expect(container[ProbingKey(id: 12, probe: probe)] == nil)
        scope.provide(Service("provided"), key: ProbingKey(id: 6, probe: probe))
        scope.provide(Service("provided again"), key: ProbingKey(id: 6, probe: probe))
        scope.register(Service.self, key: ProbingKey(id: 7, probe: probe)) { Service("scope's") }
        let child = scope.openScope("child")
        #expect(try child.require(Service.self, key: ProbingKey(id: 6, probe: probe)).name == "provided again")
        #expect(try child.require(Service.self, key: ProbingKey(id: 7, probe: probe)).name == "scope's")
        #expect(scope.unregister(Service.self, key: ProbingKey(id: 7, probe: probe)))
    }

    @Test func keysInternedByTwoContainersStillCompareEqual() throws {
        let probe = LockProbe()
        let containers = [Container(), Container()]
        for container in containers {
            container.register(Service.self, key: ProbingKey(id: 1, probe: probe)) { Service("one") }
            container.register(Service.self, key: ProbingKey(id: 2, probe: probe)) { Service("two") }
        }
        // Each container keeps its own box of each key; the public `==` still compares the values.
        let keys = containers.map { Set($0.registrations) }
        #expect(keys[0].count == 2)
        #expect(keys[0] == keys[1])
        let firstsKeyOne = try #require(containers[0].registrations.first { ($0.key?.base as? ProbingKey)?.id == 1 })
        #expect(try containers[1].require(Service.self, key: firstsKeyOne.key).name == "one")
    }
}
