extension Scope {
    /// Disposes this scope and everything below it.
    ///
    /// Deepest scopes first, siblings in reverse order of opening; in each scope, the cached instances
    /// in reverse order of creation. A hook that throws does not stop the others. Then the scope is
    /// detached from its parent. Disposing twice does nothing.
    ///
    /// A child scope whose disposal another thread is running (its hooks have not all returned) is disposed
    /// before this scope's hooks run: when one is, this call returns at once and that thread runs this
    /// scope's hooks after the child's, reporting their failures to the observer only. `await dispose()`
    /// waits for it instead, and returns them.
    ///
    /// Asynchronous hooks (``AsyncDisposable`` instances, `async` `onDispose` callbacks) cannot be awaited
    /// here: they run afterwards, in that order, in a task of their own, and their failures are not
    /// reported. `await scope.dispose()` awaits them and reports them.
    ///
    /// The hooks have run when it returns; the memory the scopes held (the last references to their
    /// instances) is released then too, unless another thread is inside a lock-free resolve at that moment:
    /// then it is released by a later disposal or registration change, once that thread has moved on, or by
    /// ``Container/reclaim()``.
    /// - Returns: The disposal hooks that threw, empty when all succeeded.
    @discardableResult
    public func dispose() -> [DisposalFailure] {
        var detached = Detached()
        var waiting: WaitingDisposal?
        let detachment = detachSubtree(into: &detached, waiting: &waiting, deferringHooks: true)
        guard detachment.runsHooks else { return [] }
        let failures = runSynchronousHooks(of: detached)
        // Released after their hooks and outside the lock (deinits may resolve), once no reader holds them.
        Reclamation.retire(consume detached)
        if detachment == .readyCounted, let parent { Self.finishDisposal(countedIn: parent) }
        return failures
    }

    /// Disposes this scope and everything below it, awaiting the asynchronous hooks.
    ///
    /// ```swift
    /// let request = container.openScope()
    /// ...
    /// let failures = await request.dispose()   // closes the database session, awaited
    /// ```
    /// The same order as `dispose()-3kxxz`: deepest scopes first, each scope's instances newest first, synchronous
    /// and asynchronous hooks alike; a hook that throws does not stop the others. A child's disposal that
    /// another thread is running is awaited first.
    /// - Returns: The disposal hooks that threw, empty when all succeeded.
    @discardableResult
    public func dispose() async -> [DisposalFailure] {
        var detached = Detached()
        var waiting: WaitingDisposal?
        let detachment = detachSubtree(into: &detached, waiting: &waiting, deferringHooks: false)
        if let waiting {
            await waiting.wait(registry)
        } else if !detachment.runsHooks {
            return []
        }
        var failures: [DisposalFailure] = []
        let observed = registry.observedWord.loadRelaxed() != 0
        var events: [(ServiceKey, (any Error)?)] = []
        for record in detached.records {
            do {
                try await record.disposeAwaiting()
                if observed { events.append((record.key, nil)) }
            } catch {
                failures.append(DisposalFailure(service: record.key, error: error))
                if observed { events.append((record.key, error)) }
            }
        }
        if observed { reportDisposals(events) }
        Reclamation.retire(consume detached)
        if detachment == .readyCounted || detachment == .waits, let parent { Self.finishDisposal(countedIn: parent) }
        return failures
    }

    /// Runs the synchronous hooks of a detached subtree and starts its asynchronous ones; returns the failures.
    @inline(__always)
    private func runSynchronousHooks(of detached: borrowing Detached) -> [DisposalFailure] {
        var failures: [DisposalFailure] = []
        var later: [DisposalRecord] = []
        let observed = registry.observedWord.loadRelaxed() != 0
        var events: [(ServiceKey, (any Error)?)] = []
        for record in detached.records {
            if record.isAsync {
                later.append(record)
                continue
            }
            do {
                try record.dispose()
                if observed { events.append((record.key, nil)) }
            } catch {
                failures.append(DisposalFailure(service: record.key, error: error))
                if observed { events.append((record.key, error)) }
            }
        }
        if !later.isEmpty { DisposalRecord.runDetached(later) }
        if observed { reportDisposals(events) }
        return failures
    }

    /// Ends a disposal counted in `parent`, then runs the disposals that waited for it, each of which ends the
    /// same way: a loop, not a recursion, however many ancestors waited.
    private static func finishDisposal(countedIn parent: Scope) {
        var next = parent.childDisposalFinished()
        while true {
            switch next {
            case .run(let waiting):
                // Hooks run for a `dispose()` that returned: their failures reach the observer only.
                guard let (scope, detached) = waiting.takeDeferred() else { return }
                _ = scope.runSynchronousHooks(of: detached)
                Reclamation.retire(consume detached)
                guard let parent = scope.parent else { return }
                next = parent.childDisposalFinished()
            case .resume(let continuation):
                continuation.resume()
                return
            case .none, .done:
                return
            }
        }
    }

    /// Counts a child's disposal as finished; returns what waited for the last one. Takes the lock.
    private func childDisposalFinished() -> WaitingDisposal.Next {
        registry.lock.withLock { locked in
            runningChildDisposals -= 1
            guard let waiting = waitingDisposal else { return .none }
            if runningChildDisposals == 0 { waitingDisposal = nil }
            return waiting.countDown(locked)
        }
    }

    /// What ``detachSubtree(into:waiting:deferringHooks:)`` left the caller to do.
    private enum Detachment {
        /// Nothing: disposed already, or nothing held.
        case nothing
        /// Run the hooks; the parent does not count this disposal.
        case ready
        /// Run the hooks, then tell the parent, which counts this disposal (``finishDisposal(countedIn:)``).
        case readyCounted
        /// The hooks wait for child disposals that other threads run: deferred to the last of them, or, not
        /// `deferringHooks`, for the caller to await `waiting`; the parent counts this disposal.
        case waits

        var runsHooks: Bool { self == .ready || self == .readyCounted }
    }

    /// Marks the subtree disposed, unpublishes and takes its state into `detached`, to retire once its hooks
    /// ran. Its hooks wait when a scope of the subtree has a child disposal running on another thread: then,
    /// `deferringHooks`, the state moves into a ``WaitingDisposal`` whose last awaited disposal runs them;
    /// otherwise `waiting` is set, for the caller to await. In line, so that a synchronous disposal's
    /// `waiting`, never set, costs nothing.
    @inline(__always)
    private func detachSubtree(
        into detached: inout Detached, waiting: inout WaitingDisposal?, deferringHooks: Bool
    ) -> Detachment {
        let locked = registry.lock.acquire()
        guard !isDisposedValue else {
            registry.lock.release(locked)
            return .nothing
        }
        // Unlinked first: `remove` walks the bucket chain that `detach` clears.
        parent?.children.remove(self)
        var running = runningChildDisposals
        var waitingScopes: [Scope]?
        if children.isEmpty {
            detach(into: &detached, locked)
            if running > 0 { waitingScopes = [self] }
        } else {
            running = 0
            for scope in subtreeDeepestFirst(locked) {
                scope.detach(into: &detached, locked)
                // This scope's leak check (``survivors``) covers the scopes below it.
                if scope !== self, !scope.tracked.isEmpty { tracked.append(contentsOf: scope.tracked) }
                if scope.runningChildDisposals > 0 {
                    running += scope.runningChildDisposals
                    waitingScopes = (waitingScopes ?? []) + [scope]
                }
            }
        }
        if parent == nil {
            for entry in registry.entries.values {
                if let cache = entry.registration?.takeRootCache(locked) { detached.objects.append(cache) }
            }
        }
        if !tracked.isEmpty { shareTrackedInstancesWithParent(locked) }
        // A disposal with no hook to run and none to wait for orders nothing: the parent does not count it.
        guard !detached.records.isEmpty || running > 0 else {
            registry.lock.release(locked)
            return detached.holdsAnything ? .ready : .nothing
        }
        if let parent { parent.runningChildDisposals += 1 }
        guard let waitingScopes else {
            registry.lock.release(locked)
            return parent == nil ? .ready : .readyCounted
        }
        let made = WaitingDisposal(remaining: running)
        for scope in waitingScopes { scope.waitingDisposal = made }
        if deferringHooks {
            made.deferred = (self, detached)
            made.next = .run(made)
            detached = Detached()
        } else {
            waiting = made
        }
        registry.lock.release(locked)
        return .waits
    }

    /// What a disposal takes out of the scopes under the lock, to dispose and release outside it.
    struct Detached {
        /// Disposal records in the order they run: each scope's newest first, scopes deepest first.
        var records: [DisposalRecord] = []
        var table: ScopeTable?
        var locals = [ServiceKey: Local]()
        /// The tables after the first, and the root scope's caches.
        var objects: [AnyObject] = []
        var moreLocals: [[ServiceKey: Local]] = []

        var holdsAnything: Bool {
            !records.isEmpty || table != nil || !locals.isEmpty || !objects.isEmpty || !moreLocals.isEmpty
        }
    }

    /// Marks this scope disposed, unpublishes its instances and moves its state into `detached`.
    private func detach(into detached: inout Detached, _ locked: borrowing Locked) {
        isDisposedValue = true
        tableWord.publish(nil)
        if !disposals.isEmpty {
            detached.records.append(contentsOf: disposals.reversed())
            disposals = []
        }
        if let table {
            if detached.table == nil { detached.table = table } else { detached.objects.append(table) }
            self.table = nil
        }
        if !locals.isEmpty {
            if detached.locals.isEmpty { detached.locals = locals } else { detached.moreLocals.append(locals) }
            locals = [ServiceKey: Local]()
        }
        children = ChildTable()
        nextInBucket = nil
    }

    /// Makes the open parent's leak check (``survivors``) cover this disposed scope's instances too, since the
    /// children table forgets a disposed scope. Weak references only; the parent's list drops those whose
    /// instance is gone each time it doubles, so a long-lived parent of many request scopes keeps only what
    /// is alive.
    private func shareTrackedInstancesWithParent(_ locked: borrowing Locked) {
        guard registry.tracksInstances, let parent, !parent.isDisposedValue else { return }
        let before = parent.tracked.count
        parent.tracked.append(contentsOf: tracked)
        // When the list's length passes a power of two (64 or more): amortized, a constant per entry.
        let after = parent.tracked.count
        if after >= 64, before.leadingZeroBitCount != after.leadingZeroBitCount {
            parent.tracked.removeAll { $0.instance == nil }
        }
    }

    /// Every scope of this subtree, each after all its descendants. Iterative, so depth costs no stack.
    func subtreeDeepestFirst(_ locked: borrowing Locked) -> [Scope] {
        var preorder: [Scope] = []
        var stack: [Scope] = [self]
        while let scope = stack.popLast() {
            preorder.append(scope)
            stack.append(contentsOf: scope.openChildrenInOrder(locked).reversed())
        }
        return preorder.reversed()
    }
}

/// A subtree's disposal whose hooks wait for child disposals that other threads are running: the last of
/// those runs the hooks (a synchronous `dispose()`, which returned) or resumes the task awaiting them.
final class WaitingDisposal: @unchecked Sendable {  // every property is guarded by the registry's lock
    enum Next {
        case none
        /// Run the deferred subtree's hooks (``deferred``) on the finishing thread.
        case run(WaitingDisposal)
        /// Resume the awaiting `dispose()`.
        case resume(CheckedContinuation<Void, Never>)
        /// Every disposal waited for has finished.
        case done
    }

    /// The child disposals still running.
    var remaining: Int
    var next = Next.none
    /// The subtree of a synchronous `dispose()` that returned, and its scope (whose parent counts it): for the
    /// finishing thread.
    var deferred: (Scope, Scope.Detached)?

    init(remaining: Int) {
        self.remaining = remaining
    }

    /// Takes the deferred subtree: for the one thread that ``countDown(_:)`` told to run it (the lock ordered
    /// that after the subtree was stored), without the lock.
    func takeDeferred() -> (Scope, Scope.Detached)? {
        deferred.take()
    }

    /// Counts one finished; returns what to do when it was the last.
    func countDown(_ locked: borrowing Locked) -> Next {
        remaining -= 1
        guard remaining == 0 else { return .none }
        let taken = next
        next = .done
        return taken
    }

    /// Suspends until every child disposal it waits for has finished.
    func wait(_ registry: Registry) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isDone = registry.lock.withLock { _ in
                guard remaining != 0 else { return true }
                next = .resume(continuation)
                return false
            }
            if isDone { continuation.resume() }
        }
    }
}
