import Testing
import Stimpak

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Readers on every route of the lock-free path, raced against every writer that frees what the path reads:
/// unregister and re-register, scope disposal, container disposal, container release.
///
/// The bugs these look for exist only in optimized code (the ARC optimizer may move a retain past the end of
/// a read section), so `.ci/run` runs this suite in a release build too: `swift test -c release --filter
/// StressTests`. A freed instance shows as a crash or as a `Canary` whose `word` is no longer `Canary.alive`.
@Suite(.serialized) struct StressTests {
    /// How long each race runs: long enough that a release build of the unsafe code fails nearly every run.
    #if DEBUG
    static let seconds = 0.3
    #else
    static let seconds = 1.0
    #endif
    static let readers = 6

    /// The lock-free routes: how a registration is made and resolved.
    enum Route: String, CaseIterable, Sendable, CustomStringConvertible {
        case singleton, inScope, transient, keyed, typedKey, weak
        var description: String { rawValue }

        var reuse: Reuse {
            switch self {
            case .singleton: .singleton
            case .inScope: .inScope
            case .transient, .keyed, .typedKey: .transient
            case .weak: .weak
            }
        }

        var key: AnyHashable? {
            switch self {
            case .keyed, .typedKey: "k"
            default: nil
            }
        }

        func register(_ container: Container) {
            container.register(Canary.self, { Canary() }, reuse: reuse, key: key)
        }

        func unregister(_ container: Container) {
            container.unregister(Canary.self, key: key)
        }

        func resolve(_ scope: any Resolving) -> Canary? {
            switch self {
            case .typedKey: scope.resolve(Canary.self, key: "k")
            case .keyed: scope.resolve(Canary.self, key: AnyHashable("k"))
            default: scope.resolve(Canary.self)
            }
        }
    }

    @Test(arguments: Route.allCases)
    func resolveRacesUnregisterAndRegister(route: Route) {
        let container = Container()
        route.register(container)
        let scope = container.openScope("request")
        let health = Health()
        race(readers: Self.readers, health: health) { tally in
            // Both the root (singletons, the root's `.inScope`) and a child scope's published table.
            tally.check(route.resolve(container))
            tally.check(route.resolve(scope))
        } write: {
            route.unregister(container)
            route.register(container)
        }
        health.expectHealthy()
    }

    @Test(arguments: Route.allCases)
    func resolveRacesScopeDisposal(route: Route) {
        let container = Container()
        route.register(container)
        let current = Shared(container.openScope(0))
        let health = Health()
        race(readers: Self.readers, health: health) { tally in
            let scope = current.value
            for _ in 0..<100 { tally.check(route.resolve(scope)) }
        } write: {
            let scope = current.value
            let next = container.openScope(Int.random(in: 1..<1_000_000))
            _ = route.resolve(next)
            current.value = next
            scope.dispose()
        }
        health.expectHealthy()
    }

    @Test(arguments: Route.allCases)
    func resolveRacesContainerDisposalAndRelease(route: Route) {
        @Sendable func make() -> (Container, Scope) {
            let container = Container()
            route.register(container)
            let scope = container.openScope("request")
            _ = route.resolve(container)
            _ = route.resolve(scope)
            return (container, scope)
        }
        // Readers hold only the scope; the writer holds the only reference to its container.
        let current = Shared(make())
        let health = Health()
        let round = Shared(0)
        race(readers: Self.readers, health: health) { tally in
            let (_, scope) = current.value
            let root = scope.root
            for _ in 0..<100 {
                tally.check(route.resolve(scope))
                tally.check(route.resolve(root))
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

    /// A `.scopedTo` instance, published in the request scopes below its session scope, raced against the
    /// session's disposal and against unregistration.
    @Test(arguments: [false, true])
    func scopedToResolveRacesSessionDisposalAndUnregister(unregisters: Bool) {
        let container = Container()
        container.register(Canary.self, reuse: .scopedTo(ScopedToTests.SessionID.self)) { Canary() }
        @Sendable func openSession(_ id: Int) -> (Scope, [Scope]) {
            let session = container.openScope(ScopedToTests.SessionID(value: id))
            let requests = (0..<Self.readers).map { session.openScope($0) }
            for request in requests { _ = request.resolve(Canary.self) }
            return (session, requests)
        }
        let current = Shared(openSession(0))
        let health = Health()
        let round = Shared(0)
        race(readers: Self.readers, health: health) { tally in
            let (_, requests) = current.value
            for request in requests {
                for _ in 0..<20 { tally.check(request.resolve(Canary.self)) }
            }
        } write: {
            if unregisters {
                container.unregister(Canary.self)
                container.register(Canary.self, reuse: .scopedTo(ScopedToTests.SessionID.self)) { Canary() }
            } else {
                round.value += 1
                let (old, _) = current.value
                current.value = openSession(round.value)
                old.dispose()
            }
        }
        health.expectHealthy()
    }

    /// A `provide`d value published in the request scopes below the scope that holds it, raced against that
    /// scope's disposal and against a scope in between providing its own value.
    @Test func providedValueResolveRacesDisposalAndShadowing() {
        let container = Container()
        @Sendable func open(_ id: Int) -> (Scope, [Scope]) {
            let holder = container.openScope(id)
            holder.provide(Canary())
            let middle = holder.openScope("middle")
            let requests = (0..<Self.readers).map { middle.openScope($0) }
            for request in requests { _ = request.resolve(Canary.self) }
            return (holder, requests)
        }
        let current = Shared(open(0))
        let round = Shared(0)
        let health = Health()
        race(readers: Self.readers, health: health) { tally in
            let (_, requests) = current.value
            for request in requests {
                for _ in 0..<20 { tally.check(request.resolve(Canary.self)) }
            }
        } write: {
            round.value += 1
            let (old, _) = current.value
            if round.value % 2 == 0 {
                current.value = open(round.value)
                old.dispose()
            } else {
                old["middle"]?.provide(Canary())
            }
        }
        health.expectHealthy()
    }

    /// A scope's registrations (a singleton of the scope, an `.inScope` instance of each request), published
    /// in the request scopes below, raced against the scope's disposal, its replacing and unregistering its
    /// registration, and a scope in between registering its own.
    @Test func scopeRegistrationResolveRacesDisposalReplacementAndShadowing() {
        let container = Container()
        container.register(Canary.self, { Canary() }, reuse: .singleton)
        @Sendable func open(_ id: Int) -> (Scope, [Scope]) {
            let holder = container.openScope(id)
            holder.register(Canary.self, { Canary() }, reuse: .singleton)
            holder.register(Canary.self, { Canary() }, reuse: .inScope, key: "request")
            let middle = holder.openScope("middle")
            let requests = (0..<Self.readers).map { middle.openScope($0) }
            return (holder, requests)
        }
        let current = Shared(open(0))
        let round = Shared(0)
        let health = Health()
        race(readers: Self.readers, health: health) { tally in
            let (_, requests) = current.value
            for request in requests {
                for _ in 0..<10 {
                    tally.check(request.resolve(Canary.self))
                    tally.check(request.resolve(Canary.self, key: "request"))
                }
            }
        } write: {
            round.value += 1
            let (old, _) = current.value
            switch round.value % 4 {
            case 0:
                current.value = open(round.value)
                old.dispose()
            case 1:
                old.register(Canary.self, { Canary() }, reuse: .singleton, ifAlreadyRegistered: .replace)
            case 2:
                old["middle"]?.register(Canary.self, { Canary() }, reuse: .inScope, key: "request")
            default:
                old.unregister(Canary.self)
            }
        }
        health.expectHealthy()
    }

    /// Request scopes keeping `.inScope` instances in their tables (which name the container's registration
    /// without holding it), raced against `.replace` and `unregister` of that registration and the live report,
    /// which reads the names: every report names the instances, and the registrations taken out of use are
    /// freed once no scope keeps an instance of them.
    @Test func keptInstancesRaceReplacementAndTheLiveReport() {
        /// A registration taken out of use, held weakly.
        final class Taken: @unchecked Sendable {  // set once, before it is shared
            weak var registration: ServiceResolver<Canary, Void>?
            init(_ registration: ServiceResolver<Canary, Void>?) { self.registration = registration }
        }
        let container = Container()
        let holder = container.openScope("holder")
        let current = Shared<ServiceResolver<Canary, Void>?>(container.register(Canary.self, { Canary() }, reuse: .inScope))
        let requests = Shared((0..<Self.readers).map { holder.openScope($0) })
        let round = Shared(0)
        let health = Health()
        let taken = Shared([Taken]())
        race(readers: Self.readers, health: health) { tally in
            let scope = holder.openScope()
            for _ in 0..<4 { tally.check(scope.resolve(Canary.self)) }
            for instance in scope.report().instances {
                #expect(instance.service == ServiceKey(service: Canary.self))
            }
            scope.dispose()
        } write: {
            round.value += 1
            let old = current.value
            switch round.value % 3 {
            case 0:
                current.value = container.register(Canary.self, { Canary() }, reuse: .inScope, ifAlreadyRegistered: .replace)
            case 1:
                container.unregister(Canary.self)
                current.value = nil
            default:
                current.value = container.register(Canary.self, { Canary() }, reuse: .inScope)
            }
            if current.value !== old { taken.value.append(Taken(old)) }
            // The requests kept open across changes keep instances of registrations taken out of use.
            for request in requests.value { _ = request.resolve(Canary.self) }
            _ = holder.report().description
            if round.value % 16 == 0 {
                for request in requests.value { request.dispose() }
                requests.value = (0..<Self.readers).map { holder.openScope($0) }
            }
        }
        health.expectHealthy()
        current.value = nil
        holder.dispose()
        container.unregister(Canary.self)
        Container.reclaim()
        #expect(taken.value.count > 2)
        #expect(taken.value.allSatisfy { $0.registration == nil }, "a registration outlived every scope that kept its instances")
    }

    /// Async creations (a singleton and each request's `.inScope` instance, made by async factories that
    /// suspend, the second one keyed) awaited by many tasks, raced against the request scopes' disposal, the
    /// singleton's unregistering and re-registering and the keyed one's replacement: every resolve gets a live
    /// instance or an error, never a freed one, and no waiter is left hanging.
    @Test func asyncCreationRacesDisposalAndReregistration() async {
        let container = Container()
        @Sendable func register() {
            container.register(Canary.self, reuse: .singleton) { () async in
                await Task.yield()
                return Canary()
            }
        }
        @Sendable func registerKeyed() {
            container.register(Canary.self, reuse: .inScope, key: "request", ifAlreadyRegistered: .replace) {
                () async in
                await Task.yield()
                return Canary()
            }
        }
        register()
        registerKeyed()
        let current = Shared(container.openScope())
        let stop = Shared(false)
        let health = Health()
        detach {
            let clock = ContinuousClock()
            let end = clock.now.advanced(by: .milliseconds(Int(Self.seconds * 1_000)))
            var round = 0
            while clock.now < end {
                round += 1
                if round.isMultiple(of: 2) {
                    let old = current.value
                    current.value = container.openScope()
                    old.dispose()
                } else if round.isMultiple(of: 3) {
                    registerKeyed()
                } else {
                    container.unregister(Canary.self)
                    register()
                }
            }
            stop.value = true
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<Self.readers * 4 {
                group.addTask {
                    var tally = Tally()
                    while !stop.value {
                        let scope = current.value
                        tally.check(await scope.resolve(Canary.self))
                        tally.check(await scope.resolve(Canary.self, key: "request"))
                    }
                    health.add(tally)
                }
            }
        }
        health.expectHealthy()
    }

    /// Resolves on every route, raced against an observer (and dependency recording) set and removed: each
    /// change retires the published table, as a registration does.
    @Test(arguments: Route.allCases)
    func resolveRacesObserverChanges(route: Route) {
        struct Quiet: ResolutionObserver {}
        let container = Container()
        route.register(container)
        let scope = container.openScope("request")
        let round = Shared(0)
        let health = Health()
        race(readers: Self.readers, health: health) { tally in
            tally.check(route.resolve(container))
            tally.check(route.resolve(scope))
        } write: {
            round.value += 1
            switch round.value % 3 {
            case 0: container.observer = Quiet()
            case 1: container.recordsDependencies = true
            default:
                container.observer = nil
                container.recordsDependencies = false
            }
        }
        health.expectHealthy()
    }

    /// A key's `==` runs inside the read section; when it resolves, the nested section must not end the
    /// outer one early.
    @Test func keyWhoseEqualityResolvesRacesUnregister() {
        nestedSectionsGate.withLock { keyWhoseEqualityResolvesRacesUnregisterGated() }
    }

    private func keyWhoseEqualityResolvesRacesUnregisterGated() {
        let container = Container()
        let other = Container()
        other.register(Foo.self) { Foo() }
        let key = ResolvingKey(name: "k", container: other)
        container.register(Canary.self, { Canary() }, reuse: .singleton, key: key)
        let health = Health()
        race(readers: Self.readers, health: health) { tally in
            tally.check(container.resolve(Canary.self, key: key))
        } write: {
            container.unregister(Canary.self, key: key)
            container.register(Canary.self, { Canary() }, reuse: .singleton, key: key)
        }
        health.expectHealthy()
    }

    /// Eight threads register, provide, resolve, open a scope with and unregister equal keys of a type whose
    /// `==` resolves from the same container (which the container's lock would deadlock on): each key value is
    /// interned once, so every thread's key names the one registration and the one child scope.
    @Test func equalKeysOfAUserTypeRaceToOneRegistration() throws {
        try nestedSectionsGate.withLock { try equalKeysOfAUserTypeRaceToOneRegistrationGated() }
    }

    private func equalKeysOfAUserTypeRaceToOneRegistrationGated() throws {
        #if DEBUG
        let rounds = 50
        #else
        let rounds = 500
        #endif
        let threads = 8
        for round in 0..<rounds {
            let container = Container()
            container.register(Foo.self) { Foo() }
            let request = container.openScope("request")
            let scopes = Shared<[ObjectIdentifier]>([])
            let failures = Shared<[String]>([])
            hammer(threads: threads) { index in
                let key = ResolvingKey(name: "k\(round)", container: container)
                container.register(Canary.self, reuse: .singleton, key: key) { Canary() }
                request.provide(Canary(), key: ResolvingKey(name: "provided", container: container))
                if container.resolve(Canary.self, key: ResolvingKey(name: "k\(round)", container: container)) == nil {
                    failures.value.append("thread \(index) resolved nothing")
                }
                if request.resolve(Canary.self, key: ResolvingKey(name: "provided", container: container)) == nil {
                    failures.value.append("thread \(index) found no provided value")
                }
                let scope = container.openScope(ResolvingKey(name: "scope", container: container))
                scopes.value.append(ObjectIdentifier(scope))
            }
            #expect(failures.value.isEmpty, "\(failures.value.prefix(3))")
            #expect(container.registrations.filter { $0.service == Canary.self }.count == 1, "round \(round)")
            #expect(Set(scopes.value).count == 1, "one child scope for one key, round \(round)")
            #expect(container.unregister(Canary.self, key: ResolvingKey(name: "k\(round)", container: container)))
            #expect(container.registrations.filter { $0.service == Canary.self }.isEmpty)
            container.dispose()
        }
    }

    /// Sixteen threads resolve from the current request scope nonstop (more busy threads than cores) while one
    /// runs request cycles: open a scope, resolve its session, make it current, dispose the previous one. The
    /// disposing thread never waits for a reader (waiting, each disposal cost a time slice whenever a reader
    /// was preempted inside its section); every resolve returns an intact session or `scopeDisposed`; nothing
    /// is alive afterwards.
    @Test func requestCyclesRaceSixteenReaders() throws {
        #if DEBUG
        let cycles = 5_000
        #else
        let cycles = 200_000
        #endif
        final class Session: Sendable {
            let canary = Canary()
            let pool: Canary
            let token: LiveCounter.Token
            init(pool: Canary, token: LiveCounter.Token) {
                self.pool = pool
                self.token = token
            }
        }
        let live = LiveCounter()
        let container = Container()
        container.register(Canary.self, reuse: .singleton) { Canary() }
        container.register(Session.self, reuse: .inScope) { (scope: Scope) in
            Session(pool: try scope.require(Canary.self), token: live.make())
        }
        let current = Shared(container.openScope(-1))
        let stop = Shared(false)
        let health = Health()
        let unexpected = Shared<[String]>([])
        let clock = ContinuousClock()
        let elapsed = Shared(Duration.zero)
        hammer(threads: 17) { index in
            if index == 16 {
                let start = clock.now
                for cycle in 0..<cycles {
                    let next = container.openScope(cycle)
                    _ = next.resolve(Session.self)
                    let previous = current.value
                    current.value = next
                    previous.dispose()
                }
                elapsed.value = clock.now - start
                stop.value = true
                return
            }
            var tally = Tally()
            while !stop.value {
                let scope = current.value
                for _ in 0..<10 {
                    do {
                        let session = try scope.require(Session.self)
                        tally.check(session.canary)
                        tally.check(session.pool)
                    } catch let error as ResolutionError where error.code == .scopeDisposed {
                        tally.missing += 1
                    } catch {
                        unexpected.value.append(String(describing: error))
                    }
                }
            }
            health.add(tally)
        }
        print("\(cycles) request cycles beside 16 reader threads took \(elapsed.value)")
        health.expectHealthy()
        #expect(unexpected.value.isEmpty, "\(unexpected.value.prefix(3))")
        current.value.dispose()
        container.dispose()
        Container.reclaim()
        #expect(live.count == 0, "\(live.count) sessions outlived their scopes")
    }

    /// Threads that come and go (each registers as it resolves, disposes request scopes while readers are
    /// inside, and exits: it hands over what it kept, leaves the registered threads' list and frees its state)
    /// race threads that scan that list as they retire, and readers: no scan reads a freed state (a crash in a
    /// release build, a report under the thread sanitizer), nothing kept is lost or released twice.
    @Test func shortLivedThreadsRaceRetiringScanners() {
        #if DEBUG
        let generations = 150
        #else
        let generations = 1_500
        #endif
        final class Session: Sendable {
            let token: LiveCounter.Token
            init(token: LiveCounter.Token) { self.token = token }
        }
        let live = LiveCounter()
        let container = Container()
        container.register(Canary.self, reuse: .singleton) { Canary() }
        container.register(Session.self, reuse: .inScope) { Session(token: live.make()) }
        let longLived = container.openScope(-1)
        let stop = Shared(false)
        let health = Health()
        hammer(threads: 6) { index in
            switch index {
            case 0:
                for generation in 0..<generations {
                    // Two at a time, joined: their exits overlap each other's and the scanners' retires.
                    hammer(threads: 2) { member in
                        var tally = Tally()
                        tally.check(longLived.resolve(Canary.self))
                        for cycle in 0..<3 {
                            let scope = container.openScope(1_000_000 + generation * 10 + member * 4 + cycle)
                            _ = scope.resolve(Session.self)
                            scope.dispose()
                        }
                        health.add(tally)
                    }
                }
                stop.value = true
            case 1, 2:
                var cycle = 0
                while !stop.value {
                    let scope = container.openScope(index * 100_000_000 + cycle)
                    _ = scope.resolve(Session.self)
                    scope.dispose()
                    cycle += 1
                }
            default:
                var tally = Tally()
                while !stop.value {
                    for _ in 0..<100 { tally.check(longLived.resolve(Canary.self)) }
                }
                health.add(tally)
            }
        }
        health.expectHealthy()
        longLived.dispose()
        container.dispose()
        Container.reclaim()
        #expect(live.count == 0, "\(live.count) sessions outlived their scopes")
    }

    /// Request scopes disposed while other threads keep the container's lock busy (listing 500 open scopes,
    /// replacing a registration) and while another thread disposes their parent: every session is disposed
    /// exactly once, before its tenant's pool and the singleton pool, lookups never find a disposed scope, and
    /// nothing is left open or alive afterwards.
    @Test func requestDisposalsRaceABusyLockAndTheirParents() throws {
        #if DEBUG
        let cycles = 1_000
        #else
        let cycles = 20_000
        #endif
        struct TenantKey: Hashable { let id: Int }
        final class Pool: Disposable, @unchecked Sendable {  // `disposals` is guarded by `lock`
            private let lock = TestLock()
            private var disposals = 0
            var isDisposed: Bool { lock.withLock { disposals > 0 } }
            var disposalCount: Int { lock.withLock { disposals } }
            func dispose() throws { lock.withLock { disposals += 1 } }
        }
        final class TenantPool: Disposable, @unchecked Sendable {  // `disposals` is guarded by `lock`
            private let lock = TestLock()
            private var disposals = 0
            var isDisposed: Bool { lock.withLock { disposals > 0 } }
            func dispose() throws { lock.withLock { disposals += 1 } }
        }
        final class Session: Disposable, @unchecked Sendable {  // `disposals` is guarded by `lock`
            let pool: Pool
            let tenantPool: TenantPool
            let token: LiveCounter.Token
            let violations: Counter
            private let lock = TestLock()
            private var disposals = 0
            init(pool: Pool, tenantPool: TenantPool, token: LiveCounter.Token, violations: Counter) {
                (self.pool, self.tenantPool, self.token, self.violations) = (pool, tenantPool, token, violations)
            }
            func dispose() throws {
                let count = lock.withLock {
                    disposals += 1
                    return disposals
                }
                if count != 1 || pool.isDisposed || tenantPool.isDisposed { violations.increment() }
            }
        }
        let live = LiveCounter()
        let violations = Counter()
        let made = Counter()
        let container = Container()
        container.register(Pool.self, reuse: .singleton) { Pool() }
        container.register(TenantPool.self, reuse: .scopedTo(TenantKey.self)) { TenantPool() }
        container.register(Session.self, reuse: .inScope) { (scope: Scope) in
            made.increment()
            return Session(
                pool: try scope.require(Pool.self), tenantPool: try scope.require(TenantPool.self), token: live.make(),
                violations: violations)
        }
        container.register(Canary.self, reuse: .inScope) { Canary() }
        let pool = try container.require(Pool.self)
        let idle = (0..<500).map { container.openScope("idle \($0)") }
        final class Handover: @unchecked Sendable {  // `scopes` is guarded by `lock`
            private let lock = TestLock()
            private var scopes: [Scope] = []
            func hand(_ scope: Scope) { lock.withLock { scopes.append(scope) } }
            func takeAll() -> [Scope] {
                lock.withLock {
                    defer { scopes = [] }
                    return scopes
                }
            }
        }
        let tenants = Handover()
        let finished = Counter()
        let workers = 4
        let lookups = Counter()
        let unexpected = Shared<[String]>([])
        hammer(threads: 7) { index in
            switch index {
            case 0:
                // Holds the lock for a listing of the open scopes, nonstop.
                while finished.value < workers { _ = container.openScopeCount }
            case 1:
                while finished.value < workers {
                    container.register(Foo.self, reuse: .singleton, ifAlreadyRegistered: .replace) { Foo() }
                }
            case 2:
                // Disposes the tenants as soon as they are handed over, racing their requests' disposals.
                while true {
                    let isLast = finished.value == workers
                    let taken = tenants.takeAll()
                    for tenant in taken { tenant.dispose() }
                    if isLast { return }
                    if taken.isEmpty { sched_yield() }
                }
            default:
                for cycle in 0..<cycles {
                    let key = TenantKey(id: index << 32 | cycle)
                    let tenant = container.openScope(key)
                    let request = tenant.openScope("request")
                    do {
                        _ = try request.require(Session.self)
                        _ = try request.require(Canary.self)
                    } catch {
                        unexpected.value.append(String(describing: error))
                    }
                    tenants.hand(tenant)
                    request.dispose()
                    // A disposed key opens a new scope; a lookup never returns a disposed one.
                    let reopened = container.openScope("again \(index)")
                    if reopened.isDisposed || container[AnyHashable("again \(index)")] !== reopened { lookups.increment() }
                    reopened.dispose()
                }
                finished.increment()
            }
        }
        #expect(unexpected.value.isEmpty, "\(unexpected.value.prefix(3))")
        #expect(violations.value == 0, "sessions disposed twice or after their pools")
        #expect(lookups.value == 0, "a lookup found a disposed scope")
        #expect(container.openScopeCount == idle.count)
        for scope in idle { scope.dispose() }
        #expect(container.openScopeCount == 0)
        container.dispose()
        Container.reclaim()
        #expect(live.count == 0, "\(live.count) of \(made.value) sessions outlived their scopes")
        #expect(pool.disposalCount == 1)
    }

    /// Runs `read` on `readers` threads and `write` on one more, over and over, for ``seconds``.
    func race(
        readers: Int, health: Health, read: @escaping @Sendable (inout Tally) -> Void,
        write: @escaping @Sendable () -> Void
    ) {
        let stop = Shared(false)
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: .milliseconds(Int(Self.seconds * 1_000)))
        hammer(threads: readers + 1) { index in
            if index == readers {
                while clock.now < end { write() }
                stop.value = true
            } else {
                var tally = Tally()
                while !stop.value { read(&tally) }
                health.add(tally)
            }
        }
    }
}

/// A key whose `==` resolves from a container, as a key type with a lookup in its equality might.
struct ResolvingKey: Hashable, Sendable {
    let name: String
    let container: Container

    static func == (left: Self, right: Self) -> Bool {
        _ = left.container.resolve(Foo.self)
        return left.name == right.name
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(name)
    }
}

/// A value behind a lock, shared between the threads of a race.
final class Shared<Value>: @unchecked Sendable {  // `storage` is guarded by `lock`
    private let lock = TestLock()
    private var storage: Value
    init(_ value: Value) { storage = value }
    var value: Value {
        get { lock.withLock { storage } }
        set { lock.withLock { storage = newValue } }
    }
}

/// An instance that can tell whether it has been freed: `deinit` clears `word`.
final class Canary: @unchecked Sendable {
    static let alive: UInt = 0xC0FF_EE00_C0FF_EE00
    private(set) var word = Canary.alive
    deinit { word = 0 }
}

/// What one reader of a race saw.
struct Tally {
    var resolved = 0
    var freed = 0
    var missing = 0

    mutating func check(_ canary: Canary?) {
        guard let canary else {
            missing += 1
            return
        }
        resolved += 1
        if canary.word != Canary.alive { freed += 1 }
    }
}

/// What all the readers of a race saw.
final class Health: @unchecked Sendable {  // `total` is guarded by `lock`
    private let lock = TestLock()
    private var total = Tally()

    func add(_ tally: Tally) {
        lock.withLock {
            total.resolved += tally.resolved
            total.freed += tally.freed
            total.missing += tally.missing
        }
    }

    func expectHealthy(sourceLocation: SourceLocation = #_sourceLocation) {
        let total = lock.withLock { self.total }
        #expect(total.freed == 0, "resolves returned \(total.freed) freed instances", sourceLocation: sourceLocation)
        #expect(total.resolved > 0, "no resolve succeeded (\(total.missing) found nothing)", sourceLocation: sourceLocation)
    }
}
