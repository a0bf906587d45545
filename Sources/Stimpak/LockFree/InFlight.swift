#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CStimpakAtomics

/// One creation of a reused instance that another thread waits for. Made by the first waiter (a creation
/// nobody waits for costs no `InFlight`) and attached to the slot; the creating thread finishes it when
/// the slot settles, and every waiter blocks until then.
final class InFlight: @unchecked Sendable {
    // `owner` and `resolver` never change; `isFinished` and `failure` are guarded by `ResolutionContext.waitLock`;
    // `isSignalled` by `mutex`.
    let owner: ResolutionContext
    let resolver: any Registration
    var isFinished = false
    /// The error the creation failed with, which its waiters share; nil while it runs, when it made the
    /// instance, or when it ended with its scope's disposal (which the waiters see for themselves).
    private(set) var failure: ResolutionError?
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var isSignalled = false
    /// The tasks awaiting the creation: suspended, no thread blocked (an `await` resolve never blocks).
    let tasks = SuspendedTasks()

    init(owner: ResolutionContext, resolver: any Registration) {
        self.owner = owner
        self.resolver = resolver
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var err = pthread_mutex_init(mutex, nil)
        precondition(err == 0, "pthread_mutex_init failed with error \(err)")
        #if canImport(Darwin)
        err = pthread_cond_init(condition, nil)
        #else
        // Timed waits measure the monotonic clock, which a change of the wall clock doesn't move.
        var attributes = pthread_condattr_t()
        err = pthread_condattr_init(&attributes)
        precondition(err == 0, "pthread_condattr_init failed with error \(err)")
        err = pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        precondition(err == 0, "pthread_condattr_setclock failed with error \(err)")
        err = pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
        #endif
        precondition(err == 0, "pthread_cond_init failed with error \(err)")
    }

    deinit {
        var err = pthread_cond_destroy(condition)
        precondition(err == 0, "pthread_cond_destroy failed with error \(err)")
        err = pthread_mutex_destroy(mutex)
        precondition(err == 0, "pthread_mutex_destroy failed with error \(err)")
        condition.deallocate()
        mutex.deallocate()
    }

    /// Called by the creating thread once the slot holds the outcome, with the container's lock released;
    /// with the error the creation failed with, if it did.
    func finish(failing failure: ResolutionError? = nil) {
        ResolutionContext.waitLock.withLock {
            self.failure = failure
            isFinished = true
        }
        var err = pthread_mutex_lock(mutex)
        precondition(err == 0, "pthread_mutex_lock failed with error \(err)")
        isSignalled = true
        err = pthread_cond_broadcast(condition)
        precondition(err == 0, "pthread_cond_broadcast failed with error \(err)")
        err = pthread_mutex_unlock(mutex)
        precondition(err == 0, "pthread_mutex_unlock failed with error \(err)")
        tasks.finish()
    }

    /// The error the creation failed with, once it has finished.
    var finishedFailure: ResolutionError? {
        ResolutionContext.waitLock.withLock { failure }
    }

    /// Blocks until the creation finishes or `limit` has passed; returns whether it finished.
    func waitUntilFinished(limit: WaitLimit) -> Bool {
        var err = pthread_mutex_lock(mutex)
        precondition(err == 0, "pthread_mutex_lock failed with error \(err)")
        defer {
            err = pthread_mutex_unlock(mutex)
            precondition(err == 0, "pthread_mutex_unlock failed with error \(err)")
        }
        guard let nanoseconds = limit.nanoseconds else {
            while !isSignalled {
                err = pthread_cond_wait(condition, mutex)
                precondition(err == 0, "pthread_cond_wait failed with error \(err)")
            }
            return true
        }
        let deadline = MonotonicClock.now() &+ nanoseconds
        while !isSignalled {
            let now = MonotonicClock.now()
            guard now < deadline else { return false }
            err = timedWait(until: deadline, now: now)
            precondition(err == 0 || err == ETIMEDOUT, "pthread_cond_timedwait failed with error \(err)")
        }
        return true
    }

    /// Waits on the condition until `deadline` on the monotonic clock (it is `now`); call with `mutex` locked.
    private func timedWait(until deadline: UInt64, now: UInt64) -> Int32 {
        #if canImport(Darwin)
        let left = deadline - now
        var relative = timespec(tv_sec: Int(left / 1_000_000_000), tv_nsec: Int(left % 1_000_000_000))
        return pthread_cond_timedwait_relative_np(condition, mutex, &relative)
        #else
        var absolute = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        return pthread_cond_timedwait(condition, mutex, &absolute)
        #endif
    }

}
