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
    /// here: from the first of them on, the hooks (synchronous ones too, so that the order holds) run afterwards,
    /// in that order, in a task of their own, and the disposal of the scope above this one waits for them (a
    /// pool outlives the sessions that use it); their failures reach the observer only. `await scope.dispose()`
    /// awaits them and returns them.
    ///
    /// The hooks before the first asynchronous one have run when it returns; the memory the scopes held (the last
    /// references to their instances) is released then too, unless another thread is inside a lock-free resolve at
    /// that moment, or holds the container's lock past a short spin (about half a microsecond): then it is released
    /// by a later disposal, registration change or use of the container's lock, once that thread has moved on, or
    /// by ``Container/reclaim()``.
    /// - Returns: The disposal hooks that threw, empty when all succeeded.
    @discardableResult
    public func dispose() -> [DisposalFailure] {
        guard let locked = registry.lock.tryAcquire() else { return disposeWhileLockIsBusy() }
        return dispose(locked)
    }

    /// ``dispose()-3kxxz`` with the container's lock held.
    @inline(__always)
    private func dispose(_ locked: consuming Locked) -> [DisposalFailure] {
        var detached = Detached()
        var waiting: WaitingDisposal?
        let detachment = detachSubtree(into: &detached, waiting: &waiting, deferringHooks: true, locked)
        guard detachment.runsHooks else { return [] }
        let counted = detachment == .readyCounted ? parent : nil
        let (failures, endsLater) = runSynchronousHooks(of: detached.records, countedIn: counted)
        // Released after their hooks and outside the lock (deinits may resolve), once no reader holds them.
        Reclamation.retire(consume detached)
        if !endsLater, let counted { Self.finishDisposal(countedIn: counted) }
        return failures
    }

    /// ``dispose()-3kxxz`` when another thread holds the container's lock: taken if that thread, running, gives
    /// it back within a short spin (``ContainerLock/tryAcquireBriefly()``); otherwise a scope with no open child
    /// is disposed under its own lock alone (``markDisposedAlone()``), without waiting for that thread, and any
    /// other waits for the lock.
    ///
    /// The spin first: disposed alone, a scope is detached and released by the lock's next holder, another
    /// thread, and a thread that frees blocks others allocated fills its allocator's cache of free blocks,
    /// then frees into their arenas under the arena's lock (glibc), where a disposal sleeps when the scheduler
    /// has preempted the thread that holds it. A holder the scheduler preempted costs the spin, half a
    /// microsecond, not a time slice.
    @inline(never)
    private func disposeWhileLockIsBusy() -> [DisposalFailure] {
        if let locked = registry.lock.tryAcquireBriefly() { return dispose(locked) }
        switch markDisposedAlone() {
        case .needsLock:
            return dispose(registry.lock.acquire())
        case .nothing:
            return []
        case .marked(let records):
            let counted = records.isEmpty ? nil : parent
            let (failures, endsLater) = runSynchronousHooks(of: records, countedIn: counted)
            if !endsLater, let counted { Self.finishDisposal(countedIn: counted) }
            return failures
        }
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
    ///
    /// The disposals of the scopes above that waited for this one run before it returns, their hooks awaited (their
    /// failures reach the observer only). An asynchronous hook that awaits the disposal of a scope above its own,
    /// itself or in a child task or a `Task {}` it starts, is not made to wait for its own scope's disposal, which
    /// awaits it: that call returns at once, as the synchronous `dispose()` does, and the hooks of the scope above run
    /// after those of the hook's scope. Through a `Task.detached`, or a task or actor that the hook only signals,
    /// the call still waits for the hook's scope, and neither returns.
    /// - Returns: The disposal hooks that threw, empty when all succeeded.
    @discardableResult
    public func dispose() async -> [DisposalFailure] {
        // As the synchronous one (see `disposeWhileLockIsBusy()`).
        guard let locked = registry.lock.tryAcquire() ?? registry.lock.tryAcquireBriefly() else {
            switch markDisposedAlone() {
            case .needsLock:
                return await dispose(registry.lock.acquire())
            case .nothing:
                return []
            case .marked(let records):
                let failures = await runHooksAwaiting(records)
                if !records.isEmpty, let parent { await Self.finishDisposalAwaiting(countedIn: parent) }
                return failures
            }
        }
        return await dispose(locked)
    }

    /// `dispose()-1w1wd` with the container's lock held. In line, as is ``runHooksAwaiting(_:)``: each async
    /// function called is a frame from the task's allocator.
    @inline(__always)
    private func dispose(_ locked: consuming Locked) async -> [DisposalFailure] {
        var detached = Detached()
        var waiting: WaitingDisposal?
        let detachment = detachSubtree(into: &detached, waiting: &waiting, deferringHooks: false, locked)
        if let waiting {
            // A hook of a disposal this one waits for awaits it: then the hooks are that disposal's to run after
            // its own, as for a synchronous `dispose()` (unless it has finished meanwhile).
            if let hooksScope = Self.hooksRunningInTask, hooksScope.asyncHooksRunningWord.load() != 0,
                hooksScope.isDescendant(of: self), waiting.defer(self, detached)
            {
                return []
            }
            await waiting.wait()
        } else if !detachment.runsHooks {
            return []
        }
        let failures = await runHooksAwaiting(detached.records)
        Reclamation.retire(consume detached)
        if detachment == .readyCounted || detachment == .waits, let parent {
            await Self.finishDisposalAwaiting(countedIn: parent)
        }
        return failures
    }

    /// The scope whose disposal's asynchronous hooks run in this task (and in the tasks they start, but detached
    /// ones): a hook that awaits the disposal of a scope above it must not wait for that disposal, which waits
    /// for the hook's own. It names a disposal under way only while the scope's ``asyncHooksRunningWord`` is set: a
    /// task a hook started may outlive the hooks, and holds the scope (disposed, its instances released; its
    /// ancestors and its container's registrations with it) until it ends.
    @TaskLocal static var hooksRunningInTask: Scope?

    /// Whether `ancestor` is above this scope.
    func isDescendant(of ancestor: Scope) -> Bool {
        var scope = parent
        while let current = scope {
            if current === ancestor { return true }
            scope = current.parent
        }
        return false
    }

    /// Runs `records`' hooks in order, awaiting the asynchronous ones; returns the failures. When one is
    /// asynchronous and a parent's disposal may wait for these hooks, they run with this scope as
    /// ``hooksRunningInTask``.
    @inline(__always)
    private func runHooksAwaiting(_ records: [DisposalRecord]) async -> [DisposalFailure] {
        if parent != nil, records.contains(where: \.isAsync) { return await runHooksNamingThisScope(records) }
        return await runHooks(awaiting: records)
    }

    /// ``runHooksAwaiting(_:)`` with this scope as ``hooksRunningInTask``. Out of line: the task-local binding's
    /// closure in line would keep the synchronous hooks' loop from being inlined into `dispose()`, whose frame would
    /// then allocate the loop's from the task's allocator.
    @inline(never)
    private func runHooksNamingThisScope(_ records: [DisposalRecord]) async -> [DisposalFailure] {
        asyncHooksRunningWord.store(1)
        defer { asyncHooksRunningWord.store(0) }
        return await Self.$hooksRunningInTask.withValue(self) { await runHooks(awaiting: records) }
    }

    /// ``runHooksAwaiting(_:)``'s loop.
    @inline(__always)
    private func runHooks(awaiting records: [DisposalRecord]) async -> [DisposalFailure] {
        var failures: [DisposalFailure] = []
        let observed = registry.observedWord.loadRelaxed() != 0
        var events: [(ServiceKey, (any Error)?)] = []
        for record in records {
            do {
                try await record.disposeAwaiting()
                if observed { events.append((record.key, nil)) }
            } catch {
                Self.note(error, of: record, in: &failures, events: &events, observed: observed)
            }
        }
        if observed { reportDisposals(events) }
        return failures
    }

    /// Notes the failure of `record`'s hooks: a ``DisposalFailure`` for each error it stands for (``DisposalErrors``),
    /// and an event for each when the container is observed.
    @inline(__always)
    private static func note(
        _ error: any Error, of record: DisposalRecord, in failures: inout [DisposalFailure],
        events: inout [(ServiceKey, (any Error)?)], observed: Bool
    ) {
        for error in DisposalErrors.each(error) {
            failures.append(DisposalFailure(service: record.key, error: error))
            if observed { events.append((record.key, error)) }
        }
    }

    /// Runs `records`' hooks in order: here up to the first asynchronous one, and from that one on, synchronous and
    /// asynchronous alike, in a task of their own, which then ends the disposal counted in `parent` (so that the
    /// parent's hooks still run after them). Returns the failures of the hooks run here, and whether the task ends
    /// the counted disposal (its hooks' failures reach the observer only).
    @inline(__always)
    private func runSynchronousHooks(
        of records: [DisposalRecord], countedIn parent: Scope?
    ) -> (failures: [DisposalFailure], endsLater: Bool) {
        var failures: [DisposalFailure] = []
        let observed = registry.observedWord.loadRelaxed() != 0
        var events: [(ServiceKey, (any Error)?)] = []
        var index = records.startIndex
        while index < records.endIndex, !records[index].isAsync {
            let record = records[index]
            do {
                try record.dispose()
                if observed { events.append((record.key, nil)) }
            } catch {
                Self.note(error, of: record, in: &failures, events: &events, observed: observed)
            }
            index += 1
        }
        if observed { reportDisposals(events) }
        guard index < records.endIndex else { return (failures, false) }
        let rest = UncheckedSendable(Array(records[index...]))
        Task {
            _ = await runHooksAwaiting(rest.value)
            if let parent { await Self.finishDisposalAwaiting(countedIn: parent) }
        }
        return (failures, true)
    }

    /// Ends a disposal counted in `parent`, then runs the disposals that waited for it, each of which ends the
    /// same way: a loop, not a recursion, however many ancestors waited.
    private static func finishDisposal(countedIn parent: Scope) {
        var next = endCountedDisposal(in: parent)
        // Hooks run for a `dispose()` that returned: their failures reach the observer only.
        while let waiting = next, let (scope, detached) = waiting.takeDeferred() {
            let (_, endsLater) = scope.runSynchronousHooks(of: detached.records, countedIn: scope.parent)
            Reclamation.retire(consume detached)
            guard !endsLater, let parent = scope.parent else { return }
            next = endCountedDisposal(in: parent)
        }
    }

    /// ``finishDisposal(countedIn:)`` in a task: the hooks of the disposals that waited for this one are awaited
    /// here (their failures reach the observer only), so that an `await dispose()` returns once they have run.
    @inline(__always)
    private static func finishDisposalAwaiting(countedIn parent: Scope) async {
        guard let waiting = endCountedDisposal(in: parent) else { return }
        await runWaitingDisposalsUncancelled(from: waiting)
    }

    /// ``runWaitingDisposals(from:)`` in an unstructured task, awaited: the disposals of the scopes above belong to
    /// no request, and the cancellation of this task (a request's) must not reach their hooks.
    @inline(never)
    private static func runWaitingDisposalsUncancelled(from waiting: WaitingDisposal) async {
        await Task { await runWaitingDisposals(from: waiting) }.value
    }

    /// Ends a disposal counted in `parent`: resumes the `await dispose()` that waited for it, or returns the
    /// disposal whose hooks the caller runs. Synchronous and out of line, so that the awaiting caller keeps no
    /// ``WaitingDisposal/Next`` in its frame (it holds a `CheckedContinuation`, of the concurrency library's resilient
    /// types, which an `async` frame allocates from the task's allocator, on every call).
    @inline(never)
    private static func endCountedDisposal(in parent: Scope) -> WaitingDisposal? {
        switch parent.childDisposalFinished() {
        case .run(let waiting):
            return waiting
        case .resume(let continuation):
            continuation.resume()
            return nil
        case .none, .done:
            return nil
        }
    }

    /// ``finishDisposalAwaiting(countedIn:)``'s loop, when a disposal waited: a loop, not a recursion.
    private static func runWaitingDisposals(from first: WaitingDisposal) async {
        var waiting = first
        while let (scope, detached) = waiting.takeDeferred() {
            _ = await scope.runHooksAwaiting(detached.records)
            Reclamation.retire(consume detached)
            guard let parent = scope.parent, let next = endCountedDisposal(in: parent) else { return }
            waiting = next
        }
    }

    /// Counts a child's disposal as finished; returns what waited for the last one. Takes this scope's own lock.
    private func childDisposalFinished() -> WaitingDisposal.Next {
        let waiting: WaitingDisposal? = ownLock.withLock {
            runningChildDisposals -= 1
            let waiting = waitingDisposal
            if runningChildDisposals == 0 { waitingDisposal = nil }
            return waiting
        }
        return waiting?.countDown() ?? .none
    }

    /// What ``markDisposedAlone()`` did.
    private enum AloneDisposal {
        /// Disposed already.
        case nothing
        /// This scope has open children or running child disposals, or is the root: its disposal takes the
        /// container's lock.
        case needsLock
        /// Marked disposed, its hooks' records taken (newest first; when there are any, the parent counts this
        /// disposal), and left for the container's lock's next holder to detach.
        case marked([DisposalRecord])
    }

    /// Marks this scope disposed and takes its disposal records under its own lock alone, for a disposal that
    /// finds the container's lock busy: what it needs is in the scope (its records, its children, its running
    /// child disposals), guarded by its own lock, under which every path that adds a record or a child looks
    /// at the disposed flag first. The rest of its state (its table, its values, its place among its parent's
    /// children) is detached and released by the container's lock's next holder (``DeferredDetach``); until then
    /// lookups skip it, and resolves in it fail, since it is disposed.
    private func markDisposedAlone() -> AloneDisposal {
        guard let parent else { return .needsLock }
        let own = ownLock
        own.lock()
        guard !isDisposedValue else {
            own.unlock()
            return .nothing
        }
        guard children.isEmpty, runningChildDisposals == 0 else {
            own.unlock()
            return .needsLock
        }
        isDisposedValue = true
        // Taken and reversed in place: no second array.
        var records: [DisposalRecord] = []
        swap(&records, &disposals)
        records.reverse()
        // Counted before this scope's lock is released: the parent's disposal reads its count after marking
        // this scope disposed under that lock, so it finds this one marked, or counted.
        if !records.isEmpty { parent.ownLock.withLock { parent.runningChildDisposals += 1 } }
        own.unlock()
        DeferredDetach.push(self)
        // The holder may be gone already: then the detachment is this thread's, at once.
        if let locked = registry.lock.tryAcquire() { registry.lock.release(locked) }
        return .marked(records)
    }

    /// Detaches this scope, which ``markDisposedAlone()`` disposed, moving what it held into `detached`. Call
    /// with the container's lock held.
    func detachMarked(into detached: inout Detached, _ locked: borrowing Locked) {
        if let parent { parent.changingChildren { parent.children.remove(self) } }
        nextInBucket = nil
        var waiting: WaitingDisposal?
        _ = detach(into: &detached, waiting: &waiting, locked)
        if !tracked.isEmpty { shareTrackedInstancesWithParent(locked) }
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
    /// ran, and releases the lock. Its hooks wait when a scope of the subtree has a child disposal running on
    /// another thread: then, `deferringHooks`, the state moves into a ``WaitingDisposal`` whose last awaited
    /// disposal runs them; otherwise `waiting` is set, for the caller to await. In line, so that a synchronous
    /// disposal's `waiting`, never set, costs nothing.
    @inline(__always)
    private func detachSubtree(
        into detached: inout Detached, waiting: inout WaitingDisposal?, deferringHooks: Bool, _ locked: consuming Locked
    ) -> Detachment {
        // Under its own lock: a disposal that finds the container's lock busy marks a scope there alone.
        let own = ownLock
        own.lock()
        guard !isDisposedValue else {
            own.unlock()
            registry.lock.release(locked)
            return .nothing
        }
        isDisposedValue = true
        own.unlock()
        var made: WaitingDisposal?
        var running = 0
        if children.isEmpty {
            running = detach(into: &detached, waiting: &made, locked)
            // Only sections started from this scope read its table (ReadSection.swift), and none can when no
            // thread but this one, outside every section, has read it (read after `detach` unpublished it).
            if parent != nil {
                detached.origin =
                    isTableReadByThisThreadAlone
                    ? Reclamation.unreadOrigin : UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque())
            }
        } else {
            // Disposed children too: detached under their own locks, each after a disposal that marked it without
            // the container's lock has counted itself in its parent, or before it marks the child.
            for scope in subtreeDeepestFirst(includingDisposed: true, locked) {
                running += scope.detach(into: &detached, waiting: &made, locked)
                if scope !== self { scope.nextInBucket = nil }
                // This scope's leak check (``survivors``) covers the scopes below it.
                if scope !== self, !scope.tracked.isEmpty { tracked.append(contentsOf: scope.tracked) }
            }
        }
        if parent == nil {
            for entry in registry.entries.values {
                if let cache = entry.registration?.takeRootCache(locked) { detached.objects.append(cache) }
            }
        }
        if !tracked.isEmpty { shareTrackedInstancesWithParent(locked) }
        // A disposal with no hook to run and none to wait for orders nothing: the parent does not count it.
        let isCounted = !detached.records.isEmpty || running > 0
        // Unlinked and counted at once, under the parent's own lock: a parent disposed without the container's
        // lock (``markDisposedAlone()``) finds this child among its children, or counted.
        if let parent {
            if isCounted {
                parent.ownLock.withLock {
                    parent.children.remove(self)
                    parent.runningChildDisposals += 1
                }
            } else {
                parent.changingChildren { parent.children.remove(self) }
            }
        }
        nextInBucket = nil
        guard isCounted else {
            registry.lock.release(locked)
            return detached.holdsAnything ? .ready : .nothing
        }
        guard let made else {
            registry.lock.release(locked)
            return parent == nil ? .ready : .readyCounted
        }
        if deferringHooks {
            guard made.defer(self, detached) else {
                // Every disposal it waited for finished meanwhile: the hooks are this thread's.
                registry.lock.release(locked)
                return parent == nil ? .ready : .readyCounted
            }
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
        var locals = ScopeLocals()
        /// The tables after the first, and the root scope's caches.
        var objects: [AnyObject] = []
        var moreLocals: [ScopeLocals] = []
        /// The address of the one child scope whose state it holds, whose table only the read sections started
        /// from that scope can read; ``Reclamation/unreadOrigin`` when no section can hold that table (only the
        /// disposing thread read it); ``Reclamation/anyOrigin`` when it may hold what any section reads.
        var origin = Reclamation.anyOrigin

        var holdsAnything: Bool {
            !records.isEmpty || table != nil || !locals.isEmpty || !objects.isEmpty || !moreLocals.isEmpty
        }

        /// What a retire that found readers keeps (``Reclamation/retire(_:)``): a request scope's table alone (the
        /// common case) as the table, which an `Any` holds without a box, else the whole.
        consuming func garbage() -> Any {
            if let table, records.isEmpty, locals.isEmpty, objects.isEmpty, moreLocals.isEmpty { return table }
            return self
        }
    }

    /// Marks this scope disposed, unpublishes its instances and moves its state into `detached`; returns how
    /// many of its children's disposals are still running, which the subtree's disposal waits for (`waiting`,
    /// made by the first scope with any, counts them).
    private func detach(into detached: inout Detached, waiting: inout WaitingDisposal?, _ locked: borrowing Locked) -> Int {
        let own = ownLock
        own.lock()
        isDisposedValue = true
        if !disposals.isEmpty {
            if detached.records.isEmpty {
                // The first scope's records: taken and reversed in place, with no second array.
                swap(&detached.records, &disposals)
                detached.records.reverse()
            } else {
                detached.records.append(contentsOf: disposals.reversed())
            }
            disposals = []
        }
        // Read and attached under the lock that a finishing child disposal counts down under.
        let running = runningChildDisposals
        if running > 0 {
            let made = waiting ?? WaitingDisposal()
            made.add(running)
            waitingDisposal = made
            waiting = made
        }
        children = ChildTable()
        own.unlock()
        tableWord.publish(nil)
        if let table {
            if detached.table == nil { detached.table = table } else { detached.objects.append(table) }
            self.table = nil
        }
        if !locals.isEmpty {
            if detached.locals.isEmpty { detached.locals = locals } else { detached.moreLocals.append(locals) }
            locals = ScopeLocals()
        }
        return running
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

    /// Every scope of this subtree, each after all its descendants; `includingDisposed`, also the children
    /// disposed that wait to be detached (``DeferredDetach``), as a disposal of the subtree takes them.
    /// Iterative, so depth costs no stack.
    func subtreeDeepestFirst(includingDisposed: Bool = false, _ locked: borrowing Locked) -> [Scope] {
        var preorder: [Scope] = []
        var stack: [Scope] = [self]
        while let scope = stack.popLast() {
            preorder.append(scope)
            stack.append(contentsOf: scope.childrenInOrder(includingDisposed: includingDisposed, locked).reversed())
        }
        return preorder.reversed()
    }
}

/// A subtree's disposal whose hooks wait for child disposals that other threads are running: the last of
/// those runs the hooks (a synchronous `dispose()`, which returned) or resumes the task awaiting them.
final class WaitingDisposal: @unchecked Sendable {  // every property is guarded by `lock`
    enum Next {
        case none
        /// Run the deferred subtree's hooks (``deferred``) on the finishing thread.
        case run(WaitingDisposal)
        /// Resume the awaiting `dispose()`.
        case resume(CheckedContinuation<Void, Never>)
        /// Every disposal waited for has finished.
        case done
    }

    /// Its own lock: the scopes it waits under count down under their own locks.
    private let lock = Lock()
    /// The child disposals still running.
    private var remaining = 0
    private var next = Next.none
    /// The subtree of a synchronous `dispose()` that returned, and its scope (whose parent counts it): for the
    /// finishing thread.
    private var deferred: (Scope, Scope.Detached)?

    /// Counts `count` more running child disposals: a scope of the subtree has that many.
    func add(_ count: Int) {
        lock.withLock { remaining += count }
    }

    /// Leaves the subtree's hooks to the last child disposal to finish; false, leaving nothing, when every one
    /// has finished already.
    func `defer`(_ scope: Scope, _ detached: Scope.Detached) -> Bool {
        lock.withLock {
            guard remaining > 0 else { return false }
            deferred = (scope, detached)
            next = .run(self)
            return true
        }
    }

    /// Takes the deferred subtree: for the one thread that ``countDown()`` told to run it.
    func takeDeferred() -> (Scope, Scope.Detached)? {
        lock.withLock { deferred.take() }
    }

    /// Counts one finished; returns what to do when it was the last.
    func countDown() -> Next {
        lock.withLock {
            remaining -= 1
            guard remaining == 0 else { return .none }
            let taken = next
            next = .done
            return taken
        }
    }

    /// Suspends until every child disposal it waits for has finished.
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isDone = lock.withLock {
                guard remaining != 0 else { return true }
                next = .resume(continuation)
                return false
            }
            if isDone { continuation.resume() }
        }
    }
}
