import Stimpak

final class Foo: @unchecked Sendable {}

final class Person: Sendable {
    let first: String
    let last: String
    init(_ first: String, _ last: String) {
        self.first = first
        self.last = last
    }
}

public final class Clock: Instantiable, Sendable {
    public required init() {}
}

/// A thread-safe log of events, for checking order and counts from many threads.
final class EventLog: @unchecked Sendable {  // `events` is guarded by `lock`
    private let lock = TestLock()
    private var storage: [String] = []

    func append(_ event: String) {
        lock.withLock { storage.append(event) }
    }

    var events: [String] { lock.withLock { storage } }

    func count(of event: String) -> Int { events.filter { $0 == event }.count }
}

/// Held by each test that opens read sections nested in others (a key whose `==` resolves), which may read any
/// scope's table, so that every scope's disposal waits for them, and by each test that checks that a disposal
/// waits only for the readers of its own scope: tests run in parallel, in one process.
let nestedSectionsGate = TestLock()

/// A tiny lock for the tests (the library's own is internal).
final class TestLock: @unchecked Sendable {
    private let gate = Gate()
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        gate.lock()
        defer { gate.unlock() }
        return try body()
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex, locked and unlocked by the same thread (a mutex unlocked by another thread is undefined behaviour, and
/// the thread sanitizer's deadlock detector then counts it as held by the first thread for good, which can stop
/// the sanitizer itself once that memory holds another mutex). To hold another thread, use a ``Signal``.
final class Gate: @unchecked Sendable {  // the mutex is only touched through lock()/unlock()
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    init() { pthread_mutex_init(mutex, nil) }
    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }
    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
}

/// An instance that records its disposal.
final class Tracked: Disposable, @unchecked Sendable {
    let name: String
    let log: EventLog
    init(_ name: String, log: EventLog) {
        self.name = name
        self.log = log
    }
    func dispose() throws {
        log.append("dispose \(name)")
    }
}

struct Boom: Error, CustomStringConvertible {
    var description: String { "boom" }
}

/// Runs `body` on `threads` OS threads at once, each starting when all are ready.
func hammer(threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let start = Barrier(count: threads)
    var handles: [pthread_t] = []
    final class Box: @unchecked Sendable {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }
    for index in 0..<threads {
        let box = Box {
            start.arriveAndWait()
            body(index)
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(box).toOpaque()
        #if canImport(Glibc)
        let err = pthread_create(
            &thread, nil,
            { raw in
                let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
                box.run()
                return nil
            }, context)
        #else
        let err = pthread_create(
            &thread, nil,
            { raw in
                let box = Unmanaged<Box>.fromOpaque(raw).takeRetainedValue()
                box.run()
                return nil
            }, context)
        #endif
        precondition(err == 0)
        handles.append(thread)
    }
    for thread in handles {
        pthread_join(thread, nil)
    }
}

/// Runs `body` on a new OS thread that nobody joins.
func detach(_ body: @escaping @Sendable () -> Void) {
    final class Box: @unchecked Sendable {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }
    var thread = pthread_t()
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    #if canImport(Glibc)
    let err = pthread_create(
        &thread, nil,
        { raw in
            Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().run()
            return nil
        }, context)
    #else
    let err = pthread_create(
        &thread, nil,
        { raw in
            Unmanaged<Box>.fromOpaque(raw).takeRetainedValue().run()
            return nil
        }, context)
    #endif
    precondition(err == 0)
    pthread_detach(thread)
}

/// All threads wait here until `count` have arrived.
final class Barrier: @unchecked Sendable {  // `arrived` is guarded by `mutex`
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var arrived = 0
    private let count: Int

    init(count: Int) {
        self.count = count
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    func arriveAndWait() {
        pthread_mutex_lock(mutex)
        arrived += 1
        if arrived >= count {
            pthread_cond_broadcast(condition)
        } else {
            while arrived < count { pthread_cond_wait(condition, mutex) }
        }
        pthread_mutex_unlock(mutex)
    }
}

/// A key whose `hash(into:)`, the first time, sets `isHashing` and waits until `letGo` fires: registered with
/// `compareArgsByValue`, it holds the container's lock while it hashes, so a test can resolve while the lock is
/// held and see what the lock-free path serves.
struct BlockingKey: Hashable, @unchecked Sendable {
    let letGo: Signal
    let isHashing: Shared<Bool>

    static func == (left: Self, right: Self) -> Bool { true }

    func hash(into hasher: inout Hasher) {
        if !isHashing.value {
            isHashing.value = true
            letGo.wait(seconds: Signal.holdLimit)
        }
        hasher.combine(0)
    }
}

/// A value handed to another thread that the compiler can't prove `Sendable` (an array of `AnyHashable`
/// keys, say) but that nobody mutates.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}

/// A count of arrivals that tasks await without blocking a thread: `wait()` returns once `arrive()` has been
/// called `count` times. `arrive()` is synchronous, so the arriving task goes on until its next suspension.
final class AsyncLatch: @unchecked Sendable {  // `left` and `waiters` are guarded by `lock`
    private let lock = TestLock()
    private var left: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(count: Int) { left = count }

    func arrive() {
        let woken: [CheckedContinuation<Void, Never>] = lock.withLock {
            left -= 1
            guard left == 0 else { return [] }
            defer { waiters = [] }
            return waiters
        }
        for waiter in woken { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isOpen: Bool = lock.withLock {
                if left <= 0 { return true }
                waiters.append(continuation)
                return false
            }
            if isOpen { continuation.resume() }
        }
    }
}

/// A task executor of `threads` OS threads that run its jobs in the order they are enqueued: with one thread, a
/// task runs until it suspends before the next job starts, which lets a test order tasks without sleeping.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
final class ThreadPoolExecutor: TaskExecutor, @unchecked Sendable {  // `jobs` and `isStopped` are guarded by `mutex`
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var jobs: [UnownedJob] = []
    private var isStopped = false

    init(threads: Int) {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
        for _ in 0..<threads { detach { self.run() } }
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pthread_mutex_lock(mutex)
        jobs.append(job)
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Lets the threads exit once the jobs enqueued so far have run.
    func stop() {
        pthread_mutex_lock(mutex)
        isStopped = true
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    private func run() {
        while true {
            pthread_mutex_lock(mutex)
            while jobs.isEmpty, !isStopped { pthread_cond_wait(condition, mutex) }
            guard !jobs.isEmpty else {
                pthread_mutex_unlock(mutex)
                return
            }
            let job = jobs.removeFirst()
            pthread_mutex_unlock(mutex)
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// `task`'s value, or nil when it has none after `seconds`: a guard that turns a hang into a test failure.
func value<Value: Sendable>(of task: Task<Value, Never>, within seconds: Double) async -> Value? {
    await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
        let outcome = FirstOutcome(continuation)
        Task.detached { outcome.settle(await task.value) }
        Task.detached {
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            outcome.settle(nil)
        }
    }
}

/// A continuation resumed by the first of several racing tasks.
final class FirstOutcome<Value: Sendable>: @unchecked Sendable {  // `continuation` is guarded by `lock`
    private let lock = TestLock()
    private var continuation: CheckedContinuation<Value, Never>?

    init(_ continuation: CheckedContinuation<Value, Never>) { self.continuation = continuation }

    func settle(_ value: Value) {
        let taken = lock.withLock { () -> CheckedContinuation<Value, Never>? in
            defer { continuation = nil }
            return continuation
        }
        taken?.resume(returning: value)
    }
}
