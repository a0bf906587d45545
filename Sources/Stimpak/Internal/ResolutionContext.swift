#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The registrations one thread is creating right now, innermost last.
///
/// Factories are synchronous, so every resolve a factory makes runs on the thread that called the
/// factory, whether it goes through the scope the factory received or through a captured container.
/// That makes a thread-local stack enough to see a cycle before it recurses.
final class ResolutionContext {
    /// Only the owning thread touches `path`.
    private(set) var path: [any Registration] = []
    /// The creation this thread is blocked on; guarded by `ResolutionContext.waitLock`.
    var waitingOn: InFlight?

    /// Guards every context's `waitingOn`: the wait-for graph between threads.
    static let waitLock = Lock()

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
    static var current: ResolutionContext {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<ResolutionContext>.fromOpaque(pointer).takeUnretainedValue()
        }
        let context = ResolutionContext()
        let err = pthread_setspecific(key, Unmanaged.passRetained(context).toOpaque())
        precondition(err == 0, "pthread_setspecific failed with error \(err)")
        return context
    }

    /// The service keys on the path, outermost first.
    var pathKeys: [ServiceKey] { path.map(\.serviceKey) }

    /// Pushes `resolver` unless that would close a cycle or nest too deep.
    func enter(_ resolver: any Registration, requested: ServiceKey) throws(ResolutionError) {
        if path.contains(where: { $0 === resolver }) {
            throw ResolutionError(.dependencyCycle, requested: requested, path: pathKeys + [resolver.serviceKey])
        }
        if path.count >= ResolutionError.maximumDepth {
            throw ResolutionError(.resolutionTooDeep, requested: requested, path: pathKeys + [resolver.serviceKey])
        }
        path.append(resolver)
    }

    func leave() {
        path.removeLast()
    }

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

/// One creation of a reused instance under way: the thread that runs the factory holds `latch`
/// until it is done, and every other thread that wants the same instance waits on it.
final class InFlight: @unchecked Sendable {
    // `latch` is a lock; `owner` and `resolver` never change; `isFinished` is guarded by
    // `ResolutionContext.waitLock`.
    let owner: ResolutionContext
    let resolver: any Registration
    private let latch = Lock()
    var isFinished = false

    /// Made by the creating thread, which holds the latch from here until ``finish()``.
    init(owner: ResolutionContext, resolver: any Registration) {
        self.owner = owner
        self.resolver = resolver
        latch.lock()
    }

    /// Called by the creating thread once the slot holds the outcome.
    func finish() {
        ResolutionContext.waitLock.withLock { isFinished = true }
        latch.unlock()
    }

    func waitUntilFinished() {
        latch.lock()
        latch.unlock()
    }
}
