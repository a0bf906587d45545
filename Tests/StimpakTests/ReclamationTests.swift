import Testing
import Stimpak

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writers (disposal, unregistration, replacement) never wait for a lock-free reader: what they unpublish is
/// released once no reader can hold it, and `Container.reclaim()` releases it on demand.
///
/// A reader is held inside its read section by a key whose `==` waits: the lock-free path compares keys inside
/// the section. Without deferred reclamation, each writer below would wait for that reader until it is let go.
/// A section reads the table of the scope its resolve started from and no other scope's, so a request scope's
/// memory waits only for a reader held in a resolve from that scope, or in a section nested in another one.
@Suite struct ReclamationTests {
    /// A key whose `==`, the first time after `hold` is armed, says it is inside and waits to be let go.
    struct HoldingKey: Hashable, Sendable {
        let id: Int
        let hold: Hold

        static func == (left: Self, right: Self) -> Bool {
            left.hold.holdOnce()
            return left.id == right.id
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(id)
        }
    }

    final class Hold: Sendable {
        let armed = Shared(false)
        let inside = Signal()
        let letGo = Signal()
        /// Run inside the held section before it waits: a resolve there opens a section nested in it.
        let nested: (@Sendable () -> Void)?

        init(nested: (@Sendable () -> Void)? = nil) {
            self.nested = nested
        }

        func holdOnce() {
            guard armed.value else { return }
            armed.value = false
            nested?()
            inside.fire()
            letGo.wait(seconds: Signal.holdLimit)
        }
    }

    final class Session: Disposable, Sendable {
        let log: EventLog
        init(log: EventLog) { self.log = log }
        func dispose() throws { log.append("dispose session") }
    }

    /// Holds a reader inside its section on another thread, in a resolve from `scope`; returns the signal that
    /// it finished.
    static func holdReader(in scope: some Resolving & Sendable, hold: Hold, id: Int = 1) -> Signal {
        let key = HoldingKey(id: id, hold: hold)
        // The first resolve publishes the lookup table, so the next one takes the lock-free route.
        #expect(scope.resolve(Foo.self, key: key) != nil)
        hold.armed.value = true
        let finished = Signal()
        detach {
            _ = scope.resolve(Foo.self, key: key)
            finished.fire()
        }
        #expect(hold.inside.wait(), "the reader is inside its section")
        return finished
    }

    @Test func disposeRunsItsHooksAndReturnsWhileAReaderIsInsideItsSection() {
        let container = Container()
        let hold = Hold()
        let log = EventLog()
        container.register(Foo.self, key: HoldingKey(id: 1, hold: hold)) { Foo() }
        container.register(Session.self, reuse: .inScope) { Session(log: log) }
        let request = container.openScope("request")
        weak let session = request.resolve(Session.self)
        #expect(session != nil)
        let finished = Self.holdReader(in: request, hold: hold)

        let returned = Signal()
        detach {
            request.dispose()
            returned.fire()
        }
        #expect(returned.wait(seconds: 10), "dispose returned without waiting for the reader")
        #expect(log.events == ["dispose session"], "its hooks ran before it returned")
        #expect(session != nil, "the memory waits for the reader that may hold it")

        hold.letGo.fire()
        #expect(finished.wait())
        Container.reclaim()
        #expect(session == nil, "released once the reader left")
    }

    /// A request scope's table is read only by the resolves that start from it: readers inside sections started
    /// from the container or from another request do not hold its memory, which is released when `dispose()`
    /// returns, as with no reader at all. A subtree's disposal waits for them.
    @Test func aRequestScopesMemoryIsReleasedAtOnceWhileReadersResolveElsewhere() {
        nestedSectionsGate.withLock { requestScopesMemoryIsReleasedAtOnceWhileReadersResolveElsewhere() }
    }

    private func requestScopesMemoryIsReleasedAtOnceWhileReadersResolveElsewhere() {
        let container = Container()
        let fromRoot = Hold()
        let fromSibling = Hold()
        container.register(Foo.self, key: HoldingKey(id: 1, hold: fromRoot)) { Foo() }
        // Another id: equal keys share one box, whose `==` is the first registered key's.
        container.register(Foo.self, key: HoldingKey(id: 2, hold: fromSibling)) { Foo() }
        container.register(Foo.self, reuse: .inScope, key: "scoped") { Foo() }
        let sibling = container.openScope("sibling")
        let rootReader = Self.holdReader(in: container, hold: fromRoot)
        let siblingReader = Self.holdReader(in: sibling, hold: fromSibling, id: 2)

        let request = container.openScope("request")
        weak let instance = request.resolve(Foo.self, key: "scoped")
        #expect(returnsPromptly { request.dispose() })
        #expect(instance == nil, "released before dispose() returned: no reader started from the request")

        // A scope with a child: its disposal takes a subtree, which waits for every reader.
        let parent = container.openScope("parent")
        let child = parent.openScope("child")
        weak let parentInstance = parent.resolve(Foo.self, key: "scoped")
        weak let childInstance = child.resolve(Foo.self, key: "scoped")
        #expect(returnsPromptly { parent.dispose() })
        #expect(parentInstance != nil && childInstance != nil, "a subtree waits for the readers inside")

        fromRoot.letGo.fire()
        fromSibling.letGo.fire()
        #expect(rootReader.wait())
        #expect(siblingReader.wait())
        Container.reclaim()
        #expect(parentInstance == nil && childInstance == nil, "released once the readers left")
    }

    /// A scope whose table no thread but the disposing one has read: a reader held inside a section started
    /// from it on another thread has not read the table either (the key is compared before), so the memory is
    /// released at once. Once another thread has read the table, the disposal waits for that scope's readers.
    @Test func aScopeWhoseTableOnlyTheDisposingThreadReadIsReleasedAtOnce() {
        let container = Container()
        let hold = Hold()
        container.register(Foo.self, key: HoldingKey(id: 1, hold: hold)) { Foo() }
        container.register(Foo.self, reuse: .inScope, key: "scoped") { Foo() }
        let request = container.openScope("request")
        weak let instance = request.resolve(Foo.self, key: "scoped")
        #expect(request.resolve(Foo.self, key: "scoped") != nil, "read from the published table, on this thread")
        let finished = Self.holdReader(in: request, hold: hold)
        request.dispose()
        #expect(instance == nil, "released before dispose() returned")
        hold.letGo.fire()
        #expect(finished.wait())

        let shared = container.openScope("shared")
        weak let sharedInstance = shared.resolve(Foo.self, key: "scoped")
        #expect(returnsPromptly { _ = shared.resolve(Foo.self, key: "scoped") }, "read on another thread")
        let second = Hold()
        container.register(Foo.self, key: HoldingKey(id: 2, hold: second)) { Foo() }
        let held = Self.holdReader(in: shared, hold: second, id: 2)
        shared.dispose()
        #expect(sharedInstance != nil, "another thread read the table: the disposal waits for the scope's readers")
        second.letGo.fire()
        #expect(held.wait())
        Container.reclaim()
        #expect(sharedInstance == nil)
    }

    @Test func unregisterAndReplaceReturnWhileAReaderIsInsideItsSection() {
        let container = Container()
        let hold = Hold()
        container.register(Foo.self, key: HoldingKey(id: 1, hold: hold)) { Foo() }
        let captured = Foo()
        weak let weakCaptured = captured
        container.register(Person.self) { withExtendedLifetime(captured) { Person("Ada", "Lovelace") } }
        #expect(container.resolve(Person.self) != nil)
        let finished = Self.holdReader(in: container, hold: hold)

        let returned = Signal()
        detach {
            container.register(Person.self) { Person("Alan", "Turing") }
            container.unregister(Person.self)
            returned.fire()
        }
        #expect(returned.wait(seconds: 10), "replace and unregister returned without waiting for the reader")
        _ = consume captured
        #expect(weakCaptured != nil, "the replaced registration waits for the reader that may hold it")

        hold.letGo.fire()
        #expect(finished.wait())
        Container.reclaim()
        #expect(weakCaptured == nil, "released once the reader left")
    }

    @Test func theNextWriterReleasesWhatAReaderHeldOnceItLeft() {
        let container = Container()
        let hold = Hold()
        container.register(Foo.self, key: HoldingKey(id: 1, hold: hold)) { Foo() }
        container.register(Foo.self, reuse: .inScope, key: "scoped") { Foo() }
        let first = container.openScope(1)
        weak let firstInstance = first.resolve(Foo.self, key: "scoped")
        let finished = Self.holdReader(in: first, hold: hold)
        let returned = Signal()
        detach {
            first.dispose()
            returned.fire()
        }
        #expect(returned.wait(seconds: 10))
        #expect(firstInstance != nil)
        hold.letGo.fire()
        #expect(finished.wait())
        // No reclaim() call: a later writer, finding its reader gone, releases it. Other tests' threads may be
        // inside sections now, so a few writes, each after the readers they saw have had time to move on.
        for round in 0..<1_000 where firstInstance != nil {
            container.openScope(round + 2).dispose()
            usleep(1_000)
        }
        #expect(firstInstance == nil, "a later disposal released it")
    }

    /// Disposals made while a reader stays inside its section pile up (the first in the sealed bag, the others in
    /// the current one): none is released while the reader stays, and every one is once it has left, by later
    /// writers alone.
    @Test func retiresPiledUpBehindAReaderAreAllReleasedOnceItLeft() {
        nestedSectionsGate.withLock { retiresPiledUpBehindAReaderAreAllReleasedOnceItLeftGated() }
    }

    private func retiresPiledUpBehindAReaderAreAllReleasedOnceItLeftGated() {
        final class WeakFoo {
            weak var instance: Foo?
            init(_ instance: Foo?) { self.instance = instance }
        }
        let container = Container()
        // The held section (a resolve from the container) opens a nested one, in which a resolve may start
        // anywhere: every scope's disposal waits for it.
        let hold = Hold(nested: { _ = container.resolve(Person.self) })
        container.register(Foo.self, key: HoldingKey(id: 1, hold: hold)) { Foo() }
        container.register(Foo.self, reuse: .inScope, key: "scoped") { Foo() }
        container.register(Person.self) { Person("Ada", "Lovelace") }
        #expect(container.resolve(Person.self) != nil)
        let finished = Self.holdReader(in: container, hold: hold)
        let disposals = Shared<[WeakFoo]>([])
        let disposed = Signal()
        // On another thread: a retire waits for the reader once `Reclamation.pendingLimit` retires wait behind
        // it, which other tests' disposals may bring about meanwhile, and only this thread lets the reader go.
        detach {
            for id in 0..<200 {
                let scope = container.openScope(id + 10)
                disposals.value.append(WeakFoo(scope.resolve(Foo.self, key: "scoped")))
                // Disposed on another thread than the one that read its table: the disposal scans the readers.
                _ = returnsPromptly { scope.dispose() }
            }
            disposed.fire()
        }
        _ = disposed.wait(seconds: 10)
        #expect(disposals.value.allSatisfy { $0.instance != nil }, "kept while the reader is inside")
        hold.letGo.fire()
        #expect(finished.wait())
        #expect(disposed.wait())
        let instances = disposals.value
        // Other tests' threads may be inside sections now: a few writes, each after those readers have had time
        // to move on.
        for round in 0..<1_000 where instances.contains(where: { $0.instance != nil }) {
            container.openScope(round + 1_000).dispose()
            usleep(1_000)
        }
        #expect(instances.allSatisfy { $0.instance == nil }, "later disposals released every one")
    }

    /// An instance whose deinit calls `Container.reclaim()`, as a test helper's cleanup might.
    final class ReclaimsWhenReleased: Sendable {
        let released: Signal
        init(_ released: Signal) { self.released = released }
        deinit {
            Container.reclaim()
            released.fire()
        }
    }

    @Test func aDeinitThatReclaimsWhileAReclaimReleasesItDoesNotWaitForItself() {
        let container = Container()
        let hold = Hold()
        let released = Signal()
        container.register(Foo.self, key: HoldingKey(id: 1, hold: hold)) { Foo() }
        container.register(ReclaimsWhenReleased.self, reuse: .inScope) { ReclaimsWhenReleased(released) }
        let request = container.openScope("request")
        #expect(request.resolve(ReclaimsWhenReleased.self) != nil)
        let finished = Self.holdReader(in: request, hold: hold)
        // Retired behind the reader (on another thread: see the test above): the reclaim below releases it, and
        // its deinit reclaims in turn.
        let disposed = returnsPromptly { request.dispose() }
        hold.letGo.fire()
        #expect(disposed)
        #expect(finished.wait())
        #expect(returnsPromptly { Container.reclaim() }, "the reclaim in the deinit waited for the reclaim running it")
        #expect(released.wait())
    }

    @Test func survivorsAreJudgedAfterPendingReleases() throws {
        let container = Container()
        container.tracksInstances = true
        let hold = Hold()
        container.register(Foo.self, key: HoldingKey(id: 1, hold: hold)) { Foo() }
        container.register(Foo.self, reuse: .inScope, key: "scoped") { Foo() }
        let released = container.openScope("released")
        let leaking = container.openScope("leaking")
        #expect(released.resolve(Foo.self, key: "scoped") != nil)
        let finished = Self.holdReader(in: released, hold: hold)
        let kept = leaking.resolve(Foo.self, key: "scoped")
        let returned = Signal()
        detach {
            released.dispose()
            leaking.dispose()
            returned.fire()
        }
        #expect(returned.wait(seconds: 10))
        hold.letGo.fire()
        #expect(finished.wait())
        // Its release is pending (or done by another test's writer): not a survivor either way.
        try released.requireNoSurvivors()
        // A real leak is still reported.
        #expect(leaking.survivors.map(\.type) == ["Foo"])
        withExtendedLifetime(kept) {}
    }
}

/// A parent's disposal orders after a child's disposal that another thread is running: the pool is never
/// disposed while a request's session that uses it still is.
@Suite struct DisposalOrderTests {
    final class Pool: Disposable, Sendable {
        let log: EventLog
        let fails: Bool
        init(log: EventLog, fails: Bool) {
            self.log = log
            self.fails = fails
        }
        func dispose() throws {
            log.append("pool")
            if fails { throw Boom() }
        }
    }

    final class Session: Disposable, Sendable {
        let pool: Pool
        let disposing = Signal()
        let finish = Signal()
        init(pool: Pool) { self.pool = pool }
        func dispose() throws {
            pool.log.append("session begins")
            disposing.fire()
            finish.wait(seconds: Signal.holdLimit)
            pool.log.append("session ends")
        }
    }

    /// A container whose request's session is being disposed on another thread, held in its hook.
    static func disposingRequest(log: EventLog, poolFails: Bool = false) throws -> (Container, Session, Signal) {
        let container = Container()
        container.register(Pool.self, reuse: .singleton) { Pool(log: log, fails: poolFails) }
        container.register(Session.self, reuse: .inScope) { (scope: Scope) in Session(pool: try scope.require(Pool.self)) }
        let request = container.openScope("request")
        let session = try request.require(Session.self)
        let childDone = Signal()
        detach {
            request.dispose()
            childDone.fire()
        }
        #expect(session.disposing.wait())
        return (container, session, childDone)
    }

    @Test func aSynchronousParentDisposalDefersItsHooksToTheRunningChild() throws {
        let log = EventLog()
        let (container, session, childDone) = try Self.disposingRequest(log: log)
        let returned = Signal()
        detach {
            container.dispose()
            returned.fire()
        }
        #expect(returned.wait(seconds: 10), "the parent's dispose() does not block")
        #expect(container.isDisposed)
        #expect(log.events == ["session begins"], "the pool waits for the session")
        session.finish.fire()
        #expect(childDone.wait())
        #expect(log.events == ["session begins", "session ends", "pool"])
    }

    @Test func anAsynchronousParentDisposalAwaitsTheRunningChild() async throws {
        let log = EventLog()
        let (container, session, childDone) = try Self.disposingRequest(log: log, poolFails: true)
        let disposal = Task { await container.dispose() }
        try await Task.sleep(nanoseconds: 20_000_000)
        #expect(log.events == ["session begins"], "the pool waits for the session")
        session.finish.fire()
        let failures = await disposal.value
        #expect(childDone.wait())
        #expect(log.events == ["session begins", "session ends", "pool"])
        #expect(failures.map(\.service.description) == [ServiceKey(service: Pool.self).description], "its own hooks' failures")
    }

    @Test func aGrandparentWaitsThroughAnIntermediateScopeWithoutHooks() throws {
        let log = EventLog()
        let container = Container()
        container.register(Pool.self, reuse: .singleton) { Pool(log: log, fails: false) }
        container.register(Session.self, reuse: .inScope) { (scope: Scope) in Session(pool: try scope.require(Pool.self)) }
        let tenant = container.openScope("tenant")
        let request = tenant.openScope("request")
        let session = try request.require(Session.self)
        let childDone = Signal()
        detach {
            request.dispose()
            childDone.fire()
        }
        #expect(session.disposing.wait())
        tenant.dispose()
        container.dispose()
        #expect(log.events == ["session begins"])
        session.finish.fire()
        #expect(childDone.wait())
        #expect(log.events == ["session begins", "session ends", "pool"])
    }
}
