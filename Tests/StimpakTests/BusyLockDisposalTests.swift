import Testing
import Stimpak

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A scope's disposal that finds the container's lock held by another thread (one the scheduler may have
/// preempted) does not wait for it when the scope has no open child: its hooks run and `dispose()` returns, and
/// the lock's next holder detaches what is left.
@Suite struct BusyLockDisposalTests {
    final class Session: Disposable, @unchecked Sendable {  // immutable but for `log`, which locks
        let log: EventLog
        let name: String
        init(_ name: String, log: EventLog) {
            self.name = name
            self.log = log
        }
        func dispose() throws { log.append("dispose \(name)") }
    }

    final class AsyncSession: AsyncDisposable, Sendable {
        let log: EventLog
        init(log: EventLog) { self.log = log }
        func dispose() async throws {
            await Task.yield()
            log.append("async dispose")
        }
    }

    /// Holds `container`'s lock on another thread until ``release()``: a key whose hash blocks, hashed under the
    /// lock (`compareArgsByValue`).
    final class LockHolder: Sendable {
        let letGo = Signal()
        let hashing = Shared(false)
        let done = Shared(false)

        init(_ container: Container) {
            let byKey = container.register(Person.self, { (_ key: BlockingKey) in Person("a", "b") }, reuse: .singleton)
            byKey.compareArgsByValue()
            let (letGo, hashing, done) = (letGo, hashing, done)
            detach {
                _ = container.resolve(Person.self, BlockingKey(letGo: letGo, isHashing: hashing))
                done.value = true
            }
            while !hashing.value { sched_yield() }
        }

        /// Lets the holder go, and waits until it has released the lock.
        func release() {
            letGo.fire()
            while !done.value { sched_yield() }
        }
    }

    /// Runs `body` on another thread; whether it finished within `seconds`.
    static func finishes(within seconds: Double = 20, _ body: @escaping @Sendable () -> Void) -> Bool {
        let finished = Signal()
        detach {
            body()
            finished.fire()
        }
        return finished.wait(seconds: seconds)
    }

    @Test func aRequestScopeIsDisposedWithoutWaitingForTheLocksHolder() throws {
        let log = EventLog()
        let container = Container()
        container.register(Session.self, reuse: .inScope) { Session("session", log: log) }
        container.register(Canary.self, reuse: .inScope) { Canary() }
        let request = container.openScope("request")
        _ = try request.require(Session.self)
        weak let canary = try request.require(Canary.self)
        let holder = LockHolder(container)
        let failures = Shared<[DisposalFailure]?>(nil)
        #expect(Self.finishes { failures.value = request.dispose() }, "dispose() waited for the lock's holder")
        #expect(log.events == ["dispose session"], "the hooks ran before dispose() returned")
        #expect(failures.value?.isEmpty == true)
        holder.release()
        // The holder's release detached the scope: nothing is left open, and its instances go once reclaimed.
        #expect(request.isDisposed)
        #expect(container.openScopeCount == 0)
        #expect(throws: ResolutionError.self) { try request.require(Session.self) }
        Container.reclaim()
        #expect(canary == nil)
        #expect(log.events == ["dispose session"], "disposed once")
        #expect(request.dispose().isEmpty, "disposing twice does nothing")
    }

    @Test func aDeinitThatReclaimsWhileTheLocksHolderDetachesItsScopeDoesNotWaitForItself() throws {
        let container = Container()
        let released = Signal()
        container.register(ReclamationTests.ReclaimsWhenReleased.self, reuse: .inScope) {
            ReclamationTests.ReclaimsWhenReleased(released)
        }
        let request = container.openScope("request")
        _ = try request.require(ReclamationTests.ReclaimsWhenReleased.self)
        let holder = LockHolder(container)
        #expect(Self.finishes { request.dispose() }, "dispose() waited for the lock's holder")
        // The holder's release detaches the scope and releases its instance, whose deinit reclaims.
        #expect(Self.finishes { holder.release() }, "the reclaim in the deinit waited for the detachment running it")
        #expect(released.wait())
    }

    @Test func aSecondDisposalWhileTheLockIsBusyDoesNothing() throws {
        let log = EventLog()
        let container = Container()
        container.register(Session.self, reuse: .inScope) { Session("session", log: log) }
        let request = container.openScope()
        _ = try request.require(Session.self)
        let holder = LockHolder(container)
        #expect(Self.finishes { _ = request.dispose() })
        #expect(Self.finishes { _ = request.dispose() })
        holder.release()
        #expect(log.events == ["dispose session"])
    }

    @Test func anAsyncDisposalAwaitsItsHooksWithoutWaitingForTheLocksHolder() async throws {
        let log = EventLog()
        let container = Container()
        container.register(AsyncSession.self, reuse: .inScope) { AsyncSession(log: log) }
        let request = container.openScope()
        _ = await request.resolve(AsyncSession.self)
        let holder = LockHolder(container)
        let failures = await request.dispose()
        #expect(failures.isEmpty)
        #expect(log.events == ["async dispose"], "awaited before dispose() returned")
        holder.release()
        #expect(container.openScopeCount == 0)
    }

    @Test func aScopeWithAnOpenChildWaitsForTheLock() throws {
        let log = EventLog()
        let container = Container()
        container.register(Session.self, reuse: .inScope) { Session("session", log: log) }
        let tenant = container.openScope("tenant")
        let request = tenant.openScope("request")
        _ = try request.require(Session.self)
        let holder = LockHolder(container)
        let finished = Signal()
        detach {
            tenant.dispose()
            finished.fire()
        }
        #expect(!finished.wait(seconds: 0.2), "a subtree's disposal takes the container's lock")
        holder.release()
        #expect(finished.wait())
        #expect(log.events == ["dispose session"])
        #expect(request.isDisposed && container.openScopeCount == 0)
    }

    @Test func aParentDisposalWaitsForAChildDisposedWithoutTheLock() throws {
        let log = EventLog()
        let container = Container()
        container.register(DisposalOrderTests.Pool.self, reuse: .singleton) { DisposalOrderTests.Pool(log: log, fails: false) }
        container.register(DisposalOrderTests.Session.self, reuse: .inScope) { (scope: Scope) in
            DisposalOrderTests.Session(pool: try scope.require(DisposalOrderTests.Pool.self))
        }
        let request = container.openScope("request")
        let session = try request.require(DisposalOrderTests.Session.self)
        let holder = LockHolder(container)
        let childDone = Signal()
        detach {
            request.dispose()
            childDone.fire()
        }
        #expect(session.disposing.wait(), "the child's hooks run while the lock is held")
        holder.release()
        #expect(Self.finishes { container.dispose() }, "the parent's dispose() does not block")
        #expect(log.events == ["session begins"], "the pool waits for the session")
        session.finish.fire()
        #expect(childDone.wait())
        #expect(log.events == ["session begins", "session ends", "pool"])
    }

    @Test func aCreationInAScopeDisposedMeanwhileDisposesItsInstance() throws {
        let log = EventLog()
        let container = Container()
        let entered = Signal(), proceed = Signal()
        container.register(Session.self, reuse: .inScope) {
            entered.fire()
            proceed.wait(seconds: Signal.holdLimit)
            return Session("late", log: log)
        }
        let request = container.openScope()
        let outcome = Shared<Result<Session, ResolutionError>?>(nil)
        detach { outcome.value = Result { () throws(ResolutionError) in try request.require(Session.self) } }
        #expect(entered.wait())
        let holder = LockHolder(container)
        #expect(Self.finishes { _ = request.dispose() })
        holder.release()
        proceed.fire()
        while outcome.value == nil { sched_yield() }
        guard case .failure(let error) = outcome.value else {
            Issue.record("a scope disposed during the creation handed out its instance")
            return
        }
        #expect(error.code == .scopeDisposed)
        #expect(log.events == ["dispose late"], "the instance made for a disposed scope is disposed")
    }
}
