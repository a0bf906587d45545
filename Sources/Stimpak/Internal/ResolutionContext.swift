#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CStimpakAtomics

/// One thread's resolution state: the registrations it is creating right now (innermost last), the
/// creation it is blocked on, and its read-section counter.
///
/// Factories are synchronous, so every resolve a factory makes runs on the thread that called the
/// factory, whether it goes through the scope the factory received or through a captured container.
/// That makes a thread-local stack enough to see a cycle before it recurses.
///
/// The path and the counter live in raw memory that only the owning thread writes (the counter is also
/// read atomically by ``waitForReaders()``), so the resolve path pays no exclusivity checks for them.
@usableFromInline
final class ResolutionContext {
    /// The registrations being made, outermost first: `depth` of them, at most `maximumDepth`.
    private let path: UnsafeMutablePointer<Unmanaged<AnyObject>>
    @usableFromInline let depth: UnsafeMutablePointer<Int>
    /// Odd while the thread is inside a read section; on a cache line of its own.
    @usableFromInline let section: UnsafeMutablePointer<UInt>
    /// The creation this thread is blocked on; guarded by `ResolutionContext.waitLock`.
    var waitingOn: InFlight?

    /// Guards every context's `waitingOn`: the wait-for graph between threads.
    static let waitLock = Lock()

    private init() {
        path = .allocate(capacity: ResolutionError.maximumDepth)
        depth = .allocate(capacity: 1)
        depth.initialize(to: 0)
        let line = UnsafeMutableRawPointer.allocate(byteCount: 128, alignment: 64)
        section = line.bindMemory(to: UInt.self, capacity: 128 / MemoryLayout<UInt>.stride)
        section.initialize(to: 0)
        Readers.shared.add(section)
    }

    deinit {
        Readers.shared.remove(section)
        UnsafeMutableRawPointer(section).deallocate()
        depth.deallocate()
        path.deallocate()
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let err = pthread_key_create(&key) { pointer in
            #if canImport(Darwin)
            Unmanaged<ResolutionContext>.fromOpaque(pointer).release()
            #else
            if let pointer { Unmanaged<ResolutionContext>.fromOpaque(pointer).release() }
            #endif
        }
        precondition(err == 0, "pthread_key_create failed with error \(err)")
        return key
    }()

    /// This thread's context, made on first use and released when the thread exits.
    @usableFromInline
    static var current: ResolutionContext {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<ResolutionContext>.fromOpaque(pointer).takeUnretainedValue()
        }
        let context = ResolutionContext()
        let err = pthread_setspecific(key, Unmanaged.passRetained(context).toOpaque())
        precondition(err == 0, "pthread_setspecific failed with error \(err)")
        return context
    }

    // MARK: Read sections

    /// Starts a read section: until ``exitReadSection()``, nothing this thread reaches through the
    /// published tables is freed. The section may not run user code or release objects.
    @inlinable @inline(__always)
    func enterReadSection() {
        stimpak_store(section, stimpak_load_relaxed(section) &+ 1)
    }

    @inlinable @inline(__always)
    func exitReadSection() {
        stimpak_store_release(section, stimpak_load_relaxed(section) &+ 1)
    }

    /// Returns once every thread that was inside a read section when it was called has left it.
    ///
    /// A writer unpublishes what it will free (a seq-cst store), calls this, then frees: a reader either
    /// entered its section (a seq-cst store) before the unpublishing and is waited for, or reads the
    /// unpublished state. Sections are a few loads long, so the wait is short.
    static func waitForReaders() {
        Readers.shared.waitForReaders(except: current.section)
    }

    // MARK: The resolution path

    /// The service keys on the path, outermost first.
    var pathKeys: [ServiceKey] {
        (0..<depth.pointee).compactMap { (path[$0].takeUnretainedValue() as? any Registration)?.serviceKey }
    }

    /// Pushes `registration` unless that would close a cycle or nest too deep.
    @usableFromInline
    func enter(_ registration: AnyObject) throws(ResolutionError) {
        let count = depth.pointee
        for index in 0..<count where path[index].takeUnretainedValue() === registration {
            throw pathError(.dependencyCycle, registration)
        }
        if count >= ResolutionError.maximumDepth {
            throw pathError(.resolutionTooDeep, registration)
        }
        path[count] = Unmanaged.passUnretained(registration)
        depth.pointee = count + 1
    }

    @inlinable @inline(__always)
    func leave() {
        depth.pointee -= 1
    }

    private func pathError(_ code: ResolutionError.Code, _ registration: AnyObject) -> ResolutionError {
        let key = (registration as? any Registration)?.serviceKey ?? ServiceKey(service: Any.self)
        return ResolutionError(code, requested: key, path: pathKeys + [key])
    }

    // MARK: Waiting for another thread's creation

    /// Blocks until `flight` finishes, unless waiting would deadlock: when the thread creating it is
    /// itself waiting, directly or through others, for a creation this thread owns.
    func wait(for flight: InFlight, requested: ServiceKey) throws(ResolutionError) {
        let lock = Self.waitLock
        lock.lock()
        if flight.isFinished {
            lock.unlock()
            return
        }
        var owner: ResolutionContext? = flight.owner
        var chain: [ServiceKey] = [flight.resolver.serviceKey]
        while let current = owner {
            if current === self {
                lock.unlock()
                throw ResolutionError(
                    .dependencyCycle, requested: requested, path: pathKeys + chain)
            }
            // A finished flight's waiter is about to wake: it no longer blocks anyone.
            guard let next = current.waitingOn, !next.isFinished else { break }
            chain.append(next.resolver.serviceKey)
            owner = next.owner
        }
        waitingOn = flight
        lock.unlock()

        flight.waitUntilFinished()

        lock.withLock { waitingOn = nil }
    }
}

/// The read-section counters of every thread that has resolved, for ``ResolutionContext/waitForReaders()``.
final class Readers: @unchecked Sendable {  // `counters` is guarded by `lock`
    static let shared = Readers()

    private let lock = Lock()
    private var counters: [UnsafeMutablePointer<UInt>] = []

    func add(_ counter: UnsafeMutablePointer<UInt>) {
        lock.withLock { counters.append(counter) }
    }

    func remove(_ counter: UnsafeMutablePointer<UInt>) {
        lock.withLock {
            if let index = counters.firstIndex(of: counter) { counters.remove(at: index) }
        }
    }

    func waitForReaders(except own: UnsafeMutablePointer<UInt>) {
        // Held while waiting, so that no counter is freed under us; a thread inside a section never
        // takes this lock (it registers before its first section and unregisters after its last).
        lock.withLock {
            for counter in counters where counter != own {
                let seen = stimpak_load(counter)
                guard seen & 1 == 1 else { continue }
                while stimpak_load(counter) == seen { sched_yield() }
            }
        }
    }
}

/// One creation of a reused instance that another thread waits for. Made by the first waiter (a creation
/// nobody waits for costs no `InFlight`) and attached to the slot; the creating thread finishes it when
/// the slot settles, and every waiter blocks until then.
final class InFlight: @unchecked Sendable {
    // `owner` and `resolver` never change; `isFinished` is guarded by `ResolutionContext.waitLock`;
    // `isSignalled` by `mutex`.
    let owner: ResolutionContext
    let resolver: any Registration
    var isFinished = false
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var isSignalled = false

    init(owner: ResolutionContext, resolver: any Registration) {
        self.owner = owner
        self.resolver = resolver
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var err = pthread_mutex_init(mutex, nil)
        precondition(err == 0, "pthread_mutex_init failed with error \(err)")
        err = pthread_cond_init(condition, nil)
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

    /// Called by the creating thread once the slot holds the outcome, with the container's lock released.
    func finish() {
        ResolutionContext.waitLock.withLock { isFinished = true }
        var err = pthread_mutex_lock(mutex)
        precondition(err == 0, "pthread_mutex_lock failed with error \(err)")
        isSignalled = true
        err = pthread_cond_broadcast(condition)
        precondition(err == 0, "pthread_cond_broadcast failed with error \(err)")
        err = pthread_mutex_unlock(mutex)
        precondition(err == 0, "pthread_mutex_unlock failed with error \(err)")
    }

    func waitUntilFinished() {
        var err = pthread_mutex_lock(mutex)
        precondition(err == 0, "pthread_mutex_lock failed with error \(err)")
        while !isSignalled {
            err = pthread_cond_wait(condition, mutex)
            precondition(err == 0, "pthread_cond_wait failed with error \(err)")
        }
        err = pthread_mutex_unlock(mutex)
        precondition(err == 0, "pthread_mutex_unlock failed with error \(err)")
    }
}
