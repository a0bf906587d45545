import CStimpakAtomics

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

// Scopes disposed while their container's lock was busy, waiting to be detached by a holder of that lock.
//
// A disposal that finds the container's lock held by another thread (which the scheduler may have preempted) does
// not wait for it when its scope has no open child (`Scope.markDisposedAlone`): under the scope's own lock it marks
// the scope disposed and takes its disposal records, runs their hooks, and pushes the scope here. What is left
// needs the container's lock and runs no user code: unlinking the scope from its parent's children, taking its
// table and values, and retiring them to `Reclamation`. Whoever next releases that container's lock does it
// (`ContainerLock.release` looks at the stack's top, a load), as does the disposing thread itself when the lock is
// free by the time it has pushed, and `Container.reclaim()`, which takes every container's lock in turn.
//
// The stack is a Treiber stack emptied whole: a push is a compare-and-swap of the top, linking the scope to the
// top it read (`Scope.nextDetached`, written before the push publishes it); a holder takes the whole stack with
// one exchange. No ABA: the top read is only stored in the scope being pushed, never followed. A scope is pushed
// once (only the disposal that marked it pushes it), retained by the stack until it is taken. One stack for every
// container: a holder detaches its own container's scopes and, for another container's, takes that container's
// lock if it is free or pushes them back.

/// The scopes whose detachment waits for a holder of their container's lock.
enum DeferredDetach {
    private static var top: UnsafeMutablePointer<UInt> { stimpak_detach_words_address() }
    /// How many threads are detaching (or pushing back) scopes they took: ``detachAll()`` waits for them.
    private static var detaching: UnsafeMutablePointer<UInt> { stimpak_detach_words_address() + 1 }

    /// Whether no scope waits: a relaxed load, on every release of a container's lock. A scope pushed just
    /// after it is seen by a later release, or detached by the thread that pushed it.
    @inline(__always)
    static var isEmpty: Bool { stimpak_load_relaxed(top) == 0 }

    /// Pushes `scope`, disposed and waiting to be detached.
    static func push(_ scope: Scope) {
        let bits = UInt(bitPattern: Unmanaged.passRetained(scope).toOpaque())
        var below = stimpak_load(top)
        repeat { scope.nextDetached = below } while stimpak_compare_exchange(top, &below, bits) == 0
    }

    /// Takes every waiting scope, counted in ``detaching`` until the caller calls ``finished()``.
    private static func takeAll() -> [Scope] {
        stimpak_own_counts_address()[1] += 1
        stimpak_fetch_add(detaching, 1)
        var bits = stimpak_exchange(top, 0)
        var scopes: [Scope] = []
        while let pointer = UnsafeRawPointer(bitPattern: bits) {
            let scope = Unmanaged<Scope>.fromOpaque(pointer).takeRetainedValue()
            bits = scope.nextDetached
            scopes.append(scope)
        }
        return scopes
    }

    /// Ends what ``takeAll()`` counted: what it took is detached and retired, or back on the stack.
    private static func finished() {
        stimpak_own_counts_address()[1] -= 1
        stimpak_fetch_sub(detaching, 1)
    }

    /// Whether a thread other than this one is detaching what it took: a deinit that this thread's retire runs
    /// may call ``detachAll(waitingFor:)``, which must not wait for its own caller.
    private static var othersAreDetaching: Bool {
        stimpak_load(detaching) != stimpak_own_counts_address()[1]
    }

    /// Detaches the waiting scopes of `lock`'s container, then releases the lock and retires what they held;
    /// another container's scopes are detached under its lock if that is free, or pushed back.
    @inline(never)
    static func detachAndRelease(_ lock: borrowing ContainerLock, _ locked: consuming Locked) {
        var detached = Scope.Detached()
        var others: [Scope] = []
        for scope in takeAll() {
            if scope.registry.lock.identity == lock.identity {
                scope.detachMarked(into: &detached, locked)
            } else {
                others.append(scope)
            }
        }
        lock.releaseOnly(locked)
        for scope in others {
            if let otherLocked = scope.registry.lock.tryAcquire() {
                scope.detachMarked(into: &detached, otherLocked)
                scope.registry.lock.releaseOnly(otherLocked)
            } else {
                push(scope)
            }
        }
        // Outside every lock: deinits may resolve.
        if detached.holdsAnything { Reclamation.retire(consume detached) }
        finished()
    }

    /// Detaches every waiting scope whose container's lock is free, once no other thread is detaching what it
    /// took: for ``Container/reclaim()``. A scope whose container's lock is held is left to that lock's holder,
    /// which detaches it as it releases the lock: waiting for it here could wait on a thread that waits for this
    /// one (a key's `hash` runs under the lock). Except `registry`'s, for a leak check of its scopes
    /// (``Scope/survivors``), whose lock it waits for. Call without any container's lock.
    static func detachAll(waitingFor registry: Registry? = nil) {
        var busy: [Scope] = []
        while !isEmpty || othersAreDetaching {
            var detached = Scope.Detached()
            let scopes = takeAll()
            for scope in scopes {
                if scope.registry === registry {
                    let locked = scope.registry.lock.acquire()
                    scope.detachMarked(into: &detached, locked)
                    scope.registry.lock.releaseOnly(locked)
                } else if let locked = scope.registry.lock.tryAcquire() {
                    scope.detachMarked(into: &detached, locked)
                    scope.registry.lock.releaseOnly(locked)
                } else {
                    busy.append(scope)
                }
            }
            if detached.holdsAnything { Reclamation.retire(consume detached) }
            finished()
            if scopes.isEmpty { sched_yield() }
        }
        for scope in busy { push(scope) }
    }
}
