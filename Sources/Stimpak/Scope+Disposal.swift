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
        guard case .ready = detachSubtree(into: &detached, deferringHooks: true) else { return [] }
        return runHooks(of: detached)
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
        switch detachSubtree(into: &detached, deferringHooks: false) {
        case .nothing: return []
        case .waiting(let waiting): await waiting.wait(registry)
        case .ready: break
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
        let parent = detached.countedIn
        Reclamation.retire(consume detached)
        Self.finishDisposal(countedIn: parent)
        return failures
    }

    /// Runs the hooks of a detached subtree (see ``runSynchronousHooks(of:)``), then ends its disposal.
    private func runHooks(of detached: consuming Detached) -> [DisposalFailure] {
        let (failures, parent) = runSynchronousHooks(of: detached)
        Self.finishDisposal(countedIn: parent)
        return failures
    }

    /// Runs the synchronous hooks of a detached subtree, starts its asynchronous ones, and retires what it
    /// held; returns the failures and the scope the disposal is counted in.
    private func runSynchronousHooks(of detached: consuming Detached) -> ([DisposalFailure], countedIn: Scope?) {
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
        let parent = detached.countedIn
        // Released after their hooks and outside the lock (deinits may resolve), once no reader holds them.
        Reclamation.retire(consume detached)
        return (failures, parent)
    }

    /// Ends a disposal counted in `parent`, then runs the disposals that waited for it, each of which ends the
    /// same way: a loop, not a recursion, however many ancestors waited.
    private static func finishDisposal(countedIn parent: Scope?) {
        var next = parent?.childDisposalFinished() ?? .none
        while true {
            switch next {
            case .run(let scope, let detached):
                // Hooks run for a `dispose()` that returned: their failures reach the observer only.
                next = scope.runSynchronousHooks(of: detached).countedIn?.childDisposalFinished() ?? .none
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
        registry.lock.lock()
        runningChildDisposals -= 1
        var next = WaitingDisposal.Next.none
        if let waiting = waitingDisposal {
            if runningChildDisposals == 0 { waitingDisposal = nil }
            next = waiting.countDown()
        }
        registry.lock.unlock()
        return next
    }

    /// Marks the subtree disposed, unpublishes and takes its state into `detached`, to retire once its hooks
    /// ran. Its hooks wait when a scope of the subtree has a child disposal running on another thread: then,
    /// `deferringHooks`, the state moves into the returned ``WaitingDisposal`` and the last of those
    /// disposals runs them; otherwise the caller awaits it.
    private func detachSubtree(into detached: inout Detached, deferringHooks: Bool) -> Detachment {
        registry.lock.lock()
        guard !isDisposedValue else {
            registry.lock.unlock()
            return .nothing
        }
        // Unlinked first: `remove` walks the bucket chain that `detach` clears.
        parent?.children.remove(self)
        var subtree: [Scope] = []
        var running = runningChildDisposals
        if children.isEmpty {
            detach(into: &detached)
        } else {
            subtree = subtreeDeepestFirst()
            running = 0
            for scope in subtree {
                scope.detach(into: &detached)
                running += scope.runningChildDisposals
            }
        }
        if parent == nil {
            for entry in registry.entries.values {
                if let cache = entry.registration?.takeRootCache() { detached.objects.append(cache) }
            }
        }
        collectTrackedInstances(of: subtree)
        // A disposal with no hook to run and none to wait for orders nothing: the parent does not count it.
        guard !detached.records.isEmpty || running > 0 else {
            registry.lock.unlock()
            return detached.holdsAnything ? .ready : .nothing
        }
        if let parent {
            parent.runningChildDisposals += 1
            detached.countedIn = parent
        }
        guard running > 0 else {
            registry.lock.unlock()
            return .ready
        }
        let waiting = WaitingDisposal(remaining: running)
        for scope in subtree.isEmpty ? [self] : subtree where scope.runningChildDisposals > 0 {
            scope.waitingDisposal = waiting
        }
        if deferringHooks {
            waiting.next = .run(self, detached)
            detached = Detached()
        }
        registry.lock.unlock()
        return .waiting(waiting)
    }

    private enum Detachment {
        /// Already disposed, or nothing to dispose.
        case nothing
        /// Detached: run its hooks now.
        case ready
        /// Detached, its hooks waiting for child disposals that other threads run.
        case waiting(WaitingDisposal)
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
        /// The parent whose ``Scope/runningChildDisposals`` counts this disposal until its hooks have run.
        var countedIn: Scope?

        var holdsAnything: Bool {
            !records.isEmpty || table != nil || !locals.isEmpty || !objects.isEmpty || !moreLocals.isEmpty
        }
    }

    /// Marks this scope disposed, unpublishes its instances and moves its state into `detached`.
    /// Call with the lock held.
    private func detach(into detached: inout Detached) {
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

    /// Makes this disposed scope's leak check (``survivors``) cover the scopes below it: the instances that
    /// `subtree` (deepest first, this scope last) tracked join its own, and, while its parent is open, its own
    /// join the parent's, since the children table forgets a disposed scope. Weak references only: no
    /// instance is released here. Call with the lock held, while tracking is on (nothing is tracked otherwise).
    private func collectTrackedInstances(of subtree: [Scope]) {
        for scope in subtree where scope !== self && !scope.tracked.isEmpty {
            tracked.append(contentsOf: scope.tracked)
        }
        guard registry.tracksInstances, !tracked.isEmpty, let parent, !parent.isDisposedValue else { return }
        parent.tracked.append(contentsOf: tracked)
    }

    /// Every scope of this subtree, each after all its descendants. Iterative, so depth costs no stack.
    func subtreeDeepestFirst() -> [Scope] {
        var preorder: [Scope] = []
        var stack: [Scope] = [self]
        while let scope = stack.popLast() {
            preorder.append(scope)
            stack.append(contentsOf: scope.openChildrenInOrder.reversed())
        }
        return preorder.reversed()
    }
}

/// A subtree's disposal whose hooks wait for child disposals that other threads are running: the last of
/// those runs the hooks (a synchronous `dispose()`, which returned) or resumes the task awaiting them.
final class WaitingDisposal: @unchecked Sendable {  // every property is guarded by the registry's lock
    enum Next {
        case none
        /// Run this subtree's hooks (`Scope.Detached`) on the finishing thread.
        case run(Scope, Scope.Detached)
        /// Resume the awaiting `dispose()`.
        case resume(CheckedContinuation<Void, Never>)
        /// Every disposal waited for has finished.
        case done
    }

    /// The child disposals still running.
    var remaining: Int
    var next = Next.none

    init(remaining: Int) {
        self.remaining = remaining
    }

    /// Counts one finished; returns what to do when it was the last. Call with the lock held.
    func countDown() -> Next {
        remaining -= 1
        guard remaining == 0 else { return .none }
        let taken = next
        next = .done
        return taken
    }

    /// Suspends until every child disposal it waits for has finished.
    func wait(_ registry: Registry) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            registry.lock.lock()
            if remaining == 0 {
                registry.lock.unlock()
                continuation.resume()
            } else {
                next = .resume(continuation)
                registry.lock.unlock()
            }
        }
    }
}
