#if canImport(os)
import os
#elseif os(Linux)
import CStimpakAtomics
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
/// Not copyable, and not a class: code borrows its owner's lock (`registry.lock.lock()`), so taking it costs
/// no reference counting (a class's local copy was a retain and a release in every locked function).
struct Lock: ~Copyable, @unchecked Sendable {  // the lock word is only touched through the calls below
    #if canImport(os)
    private let word: UnsafeMutablePointer<os_unfair_lock_s>
    #elseif os(Linux)
    private let word: UnsafeMutablePointer<UInt32>
    #else
    private let word: UnsafeMutablePointer<pthread_mutex_t>
    #endif

    init() {
        #if canImport(os)
        word = .allocate(capacity: 1)
        word.initialize(to: os_unfair_lock_s())
        #elseif os(Linux)
        word = .allocate(capacity: 1)
        word.initialize(to: 0)
        #else
        word = .allocate(capacity: 1)
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
        word.deallocate()
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

    @inline(__always)
    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
