import Testing
import Stimpak

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `.weak`: shared while someone holds it, made again afterwards.
@Suite struct WeakReuseTests {
    protocol Cache: AnyObject, Sendable {}
    final class MemoryCache: Cache {}
    struct Settings: Sendable {
        var port = 80
    }

    @Test func sharedWhileHeldAndMadeAgainAfterTheLastHolderLetsGo() throws {
        let made = Counter()
        let container = Container()
        container.register(Foo.self, reuse: .weak) { () -> Foo in
            made.increment()
            return Foo()
        }
        var held: Foo? = try container.require(Foo.self)
        #expect(try container.openScope(1).require(Foo.self) === held)
        #expect(made.value == 1)
        weak let old = held
        held = nil
        #expect(old == nil, "the container does not keep it")
        let next = try container.require(Foo.self)
        #expect(made.value == 2)
        #expect(try container.require(Foo.self) === next)
        #expect(Reuse.weak.description == ".weak")
    }

    @Test func protocolServiceWithAClassInstance() throws {
        let container = Container()
        container.register((any Cache).self, reuse: .weak) { MemoryCache() as any Cache }
        let cache = try container.require((any Cache).self)
        #expect(try container.require((any Cache).self) === cache)
    }

    @Test func valueTypeIsAnErrorThatSaysWhy() {
        let container = Container()
        container.register(Settings.self, reuse: .weak) { Settings() }
        let error = #expect(throws: ResolutionError.self) { try container.require(Settings.self) }
        #expect(error?.code == .weakValueType)
        #expect(error?.description.contains("registered .weak") == true)
        #expect(error?.description.contains("Fix: register it .singleton") == true)
        #expect(container.resolve(Settings.self) == nil, "and again, not a crash")
    }

    @Test func notDisposedByTheContainer() throws {
        let log = EventLog()
        let container = Container()
        container.register(Tracked.self, { () -> Tracked in Tracked("weak", log: log) }, reuse: .weak)
        let held = try container.require(Tracked.self)
        container.dispose()
        #expect(log.events == [])
        #expect(held.name == "weak")
    }

    @Test func madeOncePerGenerationUnderContention() {
        for _ in 0..<20 {
            let made = Counter()
            let container = Container()
            container.register(Foo.self, reuse: .weak) { () -> Foo in
                made.increment()
                usleep(200)
                return Foo()
            }
            let results = ResultBox(count: ConcurrencyTests.threads)
            // Each thread keeps what it got until all have resolved, so one generation serves them all.
            let done = Barrier(count: ConcurrencyTests.threads)
            hammer(threads: ConcurrencyTests.threads) { index in
                let instance = container.resolve(Foo.self)
                results.set(index, instance)
                done.arriveAndWait()
                withExtendedLifetime(instance) {}
            }
            #expect(made.value == 1)
            #expect(results.allSame)
        }
    }
}
