import CStimpakAtomics

#if canImport(os)
import os
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A non-recursive mutual-exclusion lock: `os_unfair_lock` on Apple platforms, a futex word on Linux (see
/// `stimpak_mutex_lock` in CStimpakAtomics.h), `pthread_mutex_t` elsewhere.
///
/// Every return code is checked: a failing lock call means memory corruption, never user input. (The futex
/// lock has none: a `FUTEX_WAIT` that returns early only makes the loop look at the word again.)
///
/// Not copyable, and not a class: code borrows its owner's lock (`shared.lock.withLock { … }`), so taking it
/// costs no reference counting. The container's lock is a ``ContainerLock``, whose holder has a token.
/// A mutual-exclusion lock's two calls, and `withLock` over them.
protocol Locking: ~Copyable {
    func lock()
    func unlock()
}

extension Locking where Self: ~Copyable {
    /// Runs `body` with the lock held.
    @inline(__always)
    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

struct Lock: Locking, ~Copyable, @unchecked Sendable {  // the lock word is only touched through the calls below
    #if canImport(os)
    private let word: UnsafeMutablePointer<os_unfair_lock_s>
    #elseif os(Linux)
    private let word: UnsafeMutablePointer<UInt32>
    #else
    private let word: UnsafeMutablePointer<pthread_mutex_t>
    #endif

    /// A lock whose word is allocated on a cache line of its own with `ownCacheLine` (the container's lock,
    /// which every request takes: its writes then take no line that readers load from their caches), beside
    /// other allocations otherwise.
    init(ownCacheLine: Bool = false) {
        #if canImport(os)
        typealias Word = os_unfair_lock_s
        #elseif os(Linux)
        typealias Word = UInt32
        #else
        typealias Word = pthread_mutex_t
        #endif
        let size = MemoryLayout<Word>.stride
        let memory = ownCacheLine ? RawMemory.allocateLines(byteCount: size) : RawMemory.allocate(byteCount: size)
        word = memory.bindMemory(to: Word.self, capacity: 1)
        #if canImport(os)
        word.initialize(to: os_unfair_lock_s())
        #elseif os(Linux)
        word.initialize(to: 0)
        #else
        word.initialize(to: pthread_mutex_t())
        let err = pthread_mutex_init(word, nil)
        precondition(err == 0, "pthread_mutex_init failed with error \(err)")
        #endif
    }

    deinit {
        #if !canImport(os) && !os(Linux)
        let err = pthread_mutex_destroy(word)
        precondition(err == 0, "pthread_mutex_destroy failed with error \(err)")
        #endif
        word.deinitialize(count: 1)
        RawMemory.release(word)
    }

    @inline(__always)
    func lock() {
        #if canImport(os)
        os_unfair_lock_lock(word)
        #elseif os(Linux)
        stimpak_mutex_lock(word)
        #else
        let err = pthread_mutex_lock(word)
        precondition(err == 0, "pthread_mutex_lock failed with error \(err)")
        #endif
    }

    /// Takes the lock if no thread holds it; returns false at once, without waiting, if one does.
    @inline(__always)
    func tryLock() -> Bool {
        #if canImport(os)
        os_unfair_lock_trylock(word)
        #elseif os(Linux)
        stimpak_mutex_trylock(word) != 0
        #else
        pthread_mutex_trylock(word) == 0
        #endif
    }

    @inline(__always)
    func unlock() {
        #if canImport(os)
        os_unfair_lock_unlock(word)
        #elseif os(Linux)
        stimpak_mutex_unlock(word)
        #else
        let err = pthread_mutex_unlock(word)
        precondition(err == 0, "pthread_mutex_unlock failed with error \(err)")
        #endif
    }

    /// The lock word's address: which lock this is.
    var identity: UnsafeRawPointer { UnsafeRawPointer(word) }

    /// Takes the lock if no thread holds it, or if its holder, running, gives it back within a short spin
    /// (about half a microsecond); returns false without sleeping otherwise: a holder the scheduler preempted,
    /// or threads asleep waiting for it. Elsewhere than on Linux, ``tryLock()``.
    func tryLockBriefly() -> Bool {
        #if os(Linux)
        stimpak_mutex_trylock_briefly(word) != 0
        #else
        tryLock()
        #endif
    }
}

/// A lock on a 32-bit word inside an object that owns it (a ``Scope``'s own lock, in its words), so that the
/// object allocates nothing for it: the futex mutex on Linux, `os_unfair_lock` on Apple platforms (one 32-bit
/// word too), and elsewhere a test-and-set lock that yields while it waits. The owner keeps the object alive
/// while the lock is used, and the word starts at 0.
struct WordLock: Locking {
    let word: UnsafeMutablePointer<UInt32>

    @inline(__always)
    func lock() {
        #if canImport(os)
        os_unfair_lock_lock(UnsafeMutableRawPointer(word).assumingMemoryBound(to: os_unfair_lock_s.self))
        #elseif os(Linux)
        stimpak_mutex_lock(word)
        #else
        while !tryLock() { sched_yield() }
        #endif
    }

    @inline(__always)
    func unlock() {
        #if canImport(os)
        os_unfair_lock_unlock(UnsafeMutableRawPointer(word).assumingMemoryBound(to: os_unfair_lock_s.self))
        #elseif os(Linux)
        stimpak_mutex_unlock(word)
        #else
        stimpak_store32(word, 0)
        #endif
    }

    #if !canImport(os) && !os(Linux)
    private func tryLock() -> Bool { stimpak_exchange32(word, 1) == 0 }
    #endif
}

/// The container's lock: it guards the registry, every scope's state and each registration's settings (see
/// ARCHITECTURE.md, "Where the lock is"). Holding it is a value: ``acquire()`` returns a ``Locked`` token, and
/// only ``release(_:)`` gives the lock back, consuming the token, so what a function does with the lock is in
/// its signature, and the compiler checks it.
///
/// The one naming rule for the code the lock guards:
/// - `Locked`, and a parameter or variable named `locked`, is the token and nothing else. The slow path of a
///   resolve is the *locked path* in prose, and `lockedPath` in code.
/// - A function that needs the lock takes the token as its last parameter, `_ locked`:
///   - `borrowing Locked`: the lock is held throughout;
///   - `inout Locked`: it may be released and taken again meanwhile (what was read before may have changed),
///     and is held when the function returns or throws;
///   - `consuming Locked`: it is released before the function returns or throws. One that returns with it
///     still held gives the token back (`-> Locked`, or a ``Holding`` value), and throws with it released.
/// - A function without a token does not need the lock. One that takes the lock itself to do what a function
///   with a token does is named `lockAnd` and that function's name (`lockAndFind`, `lockAndKeepDisposal`).
///   Where it matters (user code runs, or the lock is taken), its documentation says so ("Call without the
///   lock").
///
/// The stored state the lock guards says so where it is declared; the token checks the functions that reach
/// it, not each access.
struct ContainerLock: ~Copyable, Sendable {
    private let lock = Lock(ownCacheLine: true)

    /// Takes the lock; the token says this thread holds it until ``release(_:)`` consumes it.
    @inline(__always)
    func acquire() -> Locked {
        lock.lock()
        return Locked()
    }

    /// Takes the lock if no thread holds it; nil at once, without waiting, if one does.
    @inline(__always)
    func tryAcquire() -> Locked? {
        lock.tryLock() ? Locked() : nil
    }

    /// Takes the lock if no thread holds it or its holder gives it back within a short spin
    /// (``Lock/tryLockBriefly()``); nil, without sleeping, otherwise.
    @inline(__always)
    func tryAcquireBriefly() -> Locked? {
        lock.tryLockBriefly() ? Locked() : nil
    }

    /// Gives the lock back, having detached the scopes whose disposal left that to the lock's next holder, if
    /// any wait (``DeferredDetach``).
    @inline(__always)
    func release(_ locked: consuming Locked) {
        guard DeferredDetach.isEmpty else { return DeferredDetach.detachAndRelease(self, locked) }
        locked.end()
        lock.unlock()
    }

    /// Gives the lock back and nothing else: for ``DeferredDetach``, which detached what waits.
    @inline(__always)
    func releaseOnly(_ locked: consuming Locked) {
        locked.end()
        lock.unlock()
    }

    /// The lock's word address: which container's lock this is.
    var identity: UnsafeRawPointer { lock.identity }

    /// Runs `body` with the lock held.
    @inline(__always)
    func withLock<T, E: Error>(_ body: (borrowing Locked) throws(E) -> T) throws(E) -> T {
        let locked = acquire()
        let result: T
        do {
            result = try body(locked)
        } catch {
            release(locked)
            throw error
        }
        release(locked)
        return result
    }
}

/// Says that this thread holds the container's lock (see ``ContainerLock``): only ``ContainerLock/acquire()``
/// makes one, and only ``ContainerLock/release(_:)`` ends one.
///
/// Empty, so passing it costs nothing: the optimizer removes it. Not `Sendable`: the lock is held by a
/// thread. A token dropped without being released would leave the lock held; a debug build stops there.
struct Locked: ~Copyable {
    fileprivate init() {}

    deinit {
        assertionFailure("A Locked token was dropped without releasing the container's lock")
    }

    /// Ends the token without its `deinit`: the lock is being released.
    fileprivate consuming func end() {
        discard self
    }
}

@available(*, unavailable)
extension Locked: Sendable {}

/// A function's result that comes with the container's lock still held: the token is given back with it
/// (see ``ContainerLock``'s naming rule).
struct Holding<Value>: ~Copyable {
    let value: Value
    let locked: Locked
}
