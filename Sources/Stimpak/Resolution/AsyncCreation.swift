/// An `async` creation of a reused instance under way: the tasks awaiting it (suspended, no blocked thread),
/// and what its creator waits for, to see a cycle across tasks before it deadlocks. A reused instance's is its
/// creator's ``AsyncNode`` itself (one allocation for both); a `.graph` instance's is an object of its own.
@usableFromInline
class AsyncCreation: @unchecked Sendable {
    // `box`, `callbackContext`, `failure`, `suspended` and `hasEnded` are guarded by the lock of the container
    // whose slot (or table entry) the creation fills; so are `awaitingCallback` and `deferredUntilMade` until the creation
    // finishes, and from then on they are its creator's alone (``takeCallbacks()``). `waitingOn` is guarded by
    // `AsyncCreation.waitLock`; `serviceKey` never changes.
    /// ``AsyncNode``'s word (see ``AsyncNode/isFinished``), unused by a creation that is no node: the first stored
    /// property, so that its address is the start of the object's stored properties.
    final var nodeWord: UInt = 0
    /// The service being made.
    let serviceKey: ServiceKey
    /// The tasks awaiting the creation, made by the first of them: most creations have none, and the object and
    /// its lock are two allocations.
    private var suspended: SuspendedTasks?
    /// Whether the creation has finished: a task that finds it by another way than its slot (a `.graph`
    /// chain's claim) then waits for nothing, and a callback is no longer kept (``deferUntilMade(_:_:)``).
    private var hasEnded = false
    /// The instance, while its `resolved` callback runs on `callbackContext`'s thread.
    var box: AnyObject?
    var callbackContext: ResolutionContext?
    /// The error the creation failed with, which its waiters share; nil while it runs, when it made the
    /// instance, when its creator was cancelled (a waiter then makes the instance), or when its scope was
    /// disposed (the waiters see that for themselves, as threads waiting on an ``InFlight`` do).
    private(set) var failure: (any Error)?
    /// The creations the task making this one, or one of its child tasks, is waiting for: each child task of the
    /// factory (`async let`, a task group) may wait for one.
    private var waitingOn: [AsyncCreation] = []
    /// This instance's own `resolved` callback, when it waits for an instance only an `await` can get.
    private var awaitingCallback: AwaitingCallback?
    /// The `resolved` callbacks of instances this creation's chain made meanwhile that need this instance: run
    /// once it is made (``takeCallbacks()``), dropped when it fails.
    private var deferredUntilMade: [AwaitingCallback] = []

    /// Guards every creation's `waitingOn`: the wait-for graph between tasks, which spans containers.
    private static let waitLock = Lock()

    init(serviceKey: ServiceKey) {
        self.serviceKey = serviceKey
    }

    /// Whether the creation has finished (read under the container's lock).
    func hasEnded(_ locked: borrowing Locked) -> Bool { hasEnded }

    /// The tasks awaiting the creation, for one more to join, or nil when it has finished. Under the lock: its
    /// creator takes them when it finishes.
    func waiters(_ locked: borrowing Locked) -> SuspendedTasks? {
        if hasEnded { return nil }
        if let suspended { return suspended }
        let made = SuspendedTasks()
        suspended = made
        return made
    }

    /// Ends the creation, with the error it failed with, if it did, and returns its waiters, whom the caller
    /// wakes (``SuspendedTasks/finish()``) once the lock is released. From then on no callback is kept, and
    /// those kept are the creator's (``takeCallbacks()``).
    func finish(failing failure: (any Error)?, _ locked: borrowing Locked) -> SuspendedTasks? {
        self.failure = failure
        box = nil
        callbackContext = nil
        hasEnded = true
        return suspended.take()
    }

    /// The error for a task that gave up waiting for this creation after `limit`, resolving `requested` in
    /// the chain ending at `node`: it names the waiting services (the path) and the creation waited for.
    func timedOut(requested: ServiceKey, node: AsyncNode?, limit: WaitLimit) -> ResolutionError {
        var error = AsyncNode.pathError(.waitTimedOut, requested, node: node)
        error.waitLimit = limit
        error.isTaskWait = true
        error.creatorWaitingFor = Self.waitLock.withLock { waitingOn.first?.serviceKey }
        return error
    }

    /// Records that the chain ending at `node` waits for `target`, unless that would close a loop: the task
    /// making `target` waits, through other creations, for one the chain makes.
    /// - Returns: False for a cycle (nothing recorded).
    static func startWaiting(for target: AsyncCreation, from node: AsyncNode) -> Bool {
        let making = node.creations
        guard let innermost = making.first else { return true }
        return waitLock.withLock {
            // Every creation that the target's maker waits for, through every edge.
            var pending = [target]
            var seen: Set<ObjectIdentifier> = []
            var steps = 0
            while let creation = pending.popLast(), steps <= ResolutionError.maximumDepth * 4 {
                if making.contains(where: { $0 === creation }) { return false }
                guard seen.insert(ObjectIdentifier(creation)).inserted else { continue }
                pending.append(contentsOf: creation.waitingOn)
                steps += 1
            }
            innermost.waitingOn.append(target)
            return true
        }
    }

    /// Keeps `callback` to run once the instance is made; false when the creation has finished (made, or
    /// failed): the callback then finds the instance made, or never made.
    func deferUntilMade(_ callback: AwaitingCallback, _ locked: borrowing Locked) -> Bool {
        guard !hasEnded else { return false }
        deferredUntilMade.append(callback)
        return true
    }

    /// Keeps the instance's own `resolved` callback, which waits for an instance only an `await` can get, for the
    /// task that made the instance (``takeCallbacks()``). Call before the creation finishes.
    func keepAwaiting(_ callback: AwaitingCallback, _ locked: borrowing Locked) {
        awaitingCallback = callback
    }

    /// Takes the callbacks deferred until the instance is made, in the order they were deferred, then the
    /// instance's own awaiting callback. Call without the lock, from the task that made the creation, once it has
    /// finished (``finish(failing:_:)``, under the lock): no one else reads or writes them from then on.
    func takeCallbacks() -> [AwaitingCallback] {
        // Mostly none: nothing to build.
        guard awaitingCallback != nil || !deferredUntilMade.isEmpty else { return [] }
        defer { (deferredUntilMade, awaitingCallback) = ([], nil) }
        return deferredUntilMade + (awaitingCallback.map { [$0] } ?? [])
    }

    /// Ends what ``startWaiting(for:from:)`` recorded for `target`.
    static func stopWaiting(for target: AsyncCreation, from node: AsyncNode?) {
        guard let innermost = node?.creations.first else { return }
        waitLock.withLock {
            if let edge = innermost.waitingOn.firstIndex(where: { $0 === target }) { innermost.waitingOn.remove(at: edge) }
        }
    }
}

/// Tasks suspended until a creation finishes, no thread blocked: each resumes when it finishes, when the task
/// is cancelled, or when the container's ``WaitLimit`` has passed, whichever comes first.
final class SuspendedTasks: @unchecked Sendable {  // `waiters`, `nextWaiter` and `isFinished` are guarded by `lock`
    enum Outcome {
        case finished, cancelled, timedOut
    }

    /// A waiter between its number and its continuation (the timer or a cancellation may end it there),
    /// ended there, or suspended.
    private enum Waiter {
        case arriving
        case ended(Outcome)
        case suspended(CheckedContinuation<Outcome, Never>)
    }

    private let lock = Lock()
    private var waiters: [Int: Waiter] = [:]
    private var nextWaiter = 0
    private var isFinished = false

    /// Suspends until the creation finishes, the task is cancelled or `limit` passes. Call without the
    /// container's lock. Never inlined: its frame holds values of the concurrency library's resilient types
    /// (`CheckedContinuation`, `TaskPriority?`), each allocated from the task's allocator when the frame starts,
    /// which an `async` function that inlined it would allocate on every call, waiting or not.
    @inline(never)
    nonisolated(nonsending) func wait(limit: WaitLimit) async -> Outcome {
        let waiter: Int = lock.withLock {
            nextWaiter += 1
            waiters[nextWaiter] = .arriving
            return nextWaiter
        }
        // A timer of its own, so that a creation that never finishes (its factory awaits work that waits for
        // it, out of Stimpak's sight) ends the wait.
        let timer = limit.nanoseconds.map { nanoseconds in
            Task.detached {
                try? await Task.sleep(nanoseconds: nanoseconds)
                if !Task.isCancelled { self.end(waiter, .timedOut) }
            }
        }
        defer { timer?.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let outcome: Outcome? = lock.withLock {
                    if isFinished {
                        waiters[waiter] = nil
                        return .finished
                    }
                    if case .ended(let outcome)? = waiters[waiter] {
                        waiters[waiter] = nil
                        return outcome
                    }
                    waiters[waiter] = .suspended(continuation)
                    return nil
                }
                if let outcome { continuation.resume(returning: outcome) }
            }
        } onCancel: {
            end(waiter, .cancelled)
        }
    }

    /// Ends one waiter's wait with `outcome`, unless it has ended.
    private func end(_ waiter: Int, _ outcome: Outcome) {
        let continuation: CheckedContinuation<Outcome, Never>? = lock.withLock {
            switch waiters[waiter] {
            case .arriving?:
                waiters[waiter] = .ended(outcome)
                return nil
            case .suspended(let continuation)?:
                waiters[waiter] = nil
                return continuation
            case .ended?, nil:
                return nil
            }
        }
        continuation?.resume(returning: outcome)
    }

    /// Wakes every waiter, and any that comes later at once: the creation has finished.
    func finish() {
        let continuations: [CheckedContinuation<Outcome, Never>] = lock.withLock {
            isFinished = true
            defer { waiters = [:] }
            return waiters.values.compactMap { waiter in
                if case .suspended(let continuation) = waiter { return continuation }
                return nil
            }
        }
        for continuation in continuations { continuation.resume(returning: .finished) }
    }
}
