#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CStimpakAtomics

// Deferred reclamation: the retire and reclaim steps of the lock-free protocol (ReadSection.swift has publish
// and read-and-pin; ARCHITECTURE.md gives the argument). Every writer that unpublished something under the
// container's lock hands it here after unlocking, and never waits for a reader:
//
// - retire: the writer reads every registered thread's section counter (seq-cst). When none is odd and nothing
//   waits (no thread is inside a section, the common case), nothing unpublished can still be held: what it
//   retires is released at once, on this thread, with no lock taken (`isQuiescent`: the list of threads is read
//   while a count of scans is up, and what leaves the list is freed only once that count is 0). Otherwise,
//   under the threads' lock, it releases everything pending if no thread is inside a section, or appends a
//   batch (the garbage, and the odd counters it saw) to the pending queue.
// - reclaim: a batch is ready once every thread it recorded has moved its counter on (left that section) or
//   exited. Every later retire releases the ready batches at the front of the queue, and `reclaimAll()`
//   (tests, leak checks) waits for the readers, then releases everything.
// - A retired registration is released only once it is ready and on no thread's resolution path (its factory
//   may be running); until then it is parked here and looked for again at each retire.
//
// Why the front is enough: batches are appended in order under the lock. A thread recorded in an older batch
// with counter s is, at a newer batch's snapshot, either still at s (recorded there too) or past it. So a ready
// batch's predecessors are ready, and readiness is a prefix of the queue.
//
// Why garbage stays bounded: a batch waits only for sections that were open when it was made, and a section
// runs no factory, callback or lock (only a key's `==`), so every batch becomes ready within one section's
// length, a time slice when its reader is preempted. Should a reader stay inside a section for as long as it
// takes `pendingLimit` batches to pile up (a debugger holding it), the retiring writer waits for that reader
// (`reclaimAll`) as a last resort, which bounds memory.

/// What lock-free readers may still hold, released once none can: the one place that pairs "unpublished under
/// the lock" with "released after it".
enum Reclamation {
    /// Releases `garbage` (and, once no factory of theirs runs, `registrations`) once no reader can still hold
    /// what it unpublished: at once when no thread is inside a read section, else at a later retire. Never
    /// waits for another thread. Call without the container's lock, after unpublishing under it: deinits may
    /// run user code.
    static func retire<Garbage>(_ garbage: consuming Garbage, registrations: consuming [any Registration]) {
        guard !registrations.isEmpty else {
            retire(garbage)
            return
        }
        shared.lock.lock()
        enqueue(garbage, registrations: registrations)
    }

    /// Releases `garbage` once no reader can still hold what it unpublished (see
    /// ``retire(_:registrations:)``); the common case in line, with no array of registrations to make.
    @inline(__always)
    static func retire<Garbage>(_ garbage: consuming Garbage) {
        if isQuiescent() {
            _ = consume garbage
            return
        }
        shared.lock.lock()
        enqueue(garbage, registrations: [])
    }

    /// Whether nothing waits to be released and no registered thread is inside a read section, read without
    /// the threads' lock (a disposal on every request takes no lock of this module's besides the container's).
    ///
    /// The registered threads are read while `scanners` counts this scan: a thread that leaves the list (it
    /// is exiting, and its state is freed with it) or a list that is replaced is freed only once `scanners` is
    /// 0 after the change, and every load here is seq-cst after the increment, so the scan reads either the
    /// list after the change or memory that is still allocated. `count` is read before the list's address:
    /// a list that grows is published before the count that needs it, one that shrinks after the count.
    @inline(__always)
    private static func isQuiescent() -> Bool {
        let words = shared.words
        guard words.advanced(by: Words.busy).load() == 0 else { return false }
        let scanners = words.advanced(by: Words.scanners).address
        stimpak_fetch_add(scanners, 1)
        let count = Int(words.advanced(by: Words.count).load())
        let threads = UnsafeMutablePointer<UInt>(bitPattern: words.advanced(by: Words.threads).load())
        var isInside = false
        for index in 0..<count {
            let thread = UnsafeMutablePointer<stimpak_thread_state>(bitPattern: stimpak_load(threads.unsafelyUnwrapped + index))
            if stimpak_section_load(thread.unsafelyUnwrapped) & 1 == 1 {
                isInside = true
                break
            }
        }
        stimpak_fetch_sub(scanners, 1)
        return !isInside
    }

    /// Waits until no lock-free scan (``isQuiescent()``) is under way, so that what the last change to the
    /// list took out of it (a thread's state, an outgrown list) can be freed. Call without the threads' lock.
    private static func waitForScanners() {
        let scanners = shared.words.advanced(by: Words.scanners)
        while scanners.load() != 0 { sched_yield() }
    }

    /// The words ``isQuiescent()`` reads without the lock, written under it.
    private enum Words {
        /// The address of the registered threads' list (their states' addresses).
        static let threads = 0
        /// How many threads are registered.
        static let count = 1
        /// How many lock-free scans are under way.
        static let scanners = 2
        /// 1 while batches are pending or registrations parked: the slow path collects them.
        static let busy = 3
    }

    /// ``retire(_:registrations:)`` past its common case. Call with the threads' lock held; returns with it
    /// released.
    @inline(never)
    private static func enqueue<Garbage>(_ garbage: consuming Garbage, registrations: consuming [any Registration]) {
        let state = shared.state
        guard state.pointee.hasReaderInside() else {
            // Nothing unpublished can still be held: this and everything pending is released now.
            let released = state.pointee.release(all: true, adding: registrations)
            shared.lock.unlock()
            _ = consume garbage
            drop(consume released)
            return
        }
        let released = state.pointee.release(all: false, adding: [])
        state.pointee.pending.append(
            Batch(readers: state.pointee.readersInside(), garbage: garbage, registrations: registrations))
        state.pointee.appended += 1
        state.pointee.publishBusy()
        let isOverLimit = state.pointee.pendingCount() >= pendingLimit
        shared.lock.unlock()
        drop(consume released)
        if isOverLimit { reclaimAll() }
    }

    /// Waits for the threads inside read sections when this is called to leave them, then releases everything
    /// retired before, except registrations whose factories are still running. For leak checks and tests; a
    /// writer never needs it. The lock is released while it waits, so writers go on meanwhile.
    static func reclaimAll() {
        let own = stimpak_thread_get()
        let state = shared.state
        shared.lock.lock()
        let target = state.pointee.appended
        while true {
            let released = state.pointee.release(all: false, adding: [])
            // A batch that waits for this thread's own open section (a key's `==` that called this) can't be
            // released here.
            let isDone =
                state.pointee.releasedCount >= target && state.pointee.dropping == 0
                || state.pointee.frontWaitsOnlyFor(own)
            shared.lock.unlock()
            drop(consume released)
            if isDone { return }
            sched_yield()
            shared.lock.lock()
        }
    }

    /// Registers the counter of a thread that is about to enter its first section.
    static func register(_ thread: UnsafeMutablePointer<stimpak_thread_state>) {
        let state = shared.state
        let outgrown = shared.lock.withLock { state.pointee.add(thread) }
        if let outgrown {
            waitForScanners()
            RawMemory.release(outgrown)
        }
    }

    /// Unregisters the counter of a thread that has left its last section (it is exiting): no batch waits
    /// for it any more.
    static func unregister(_ thread: UnsafeMutablePointer<stimpak_thread_state>) {
        let state = shared.state
        let (released, outgrown) = shared.lock.withLock {
            let outgrown = state.pointee.remove(thread)
            return (state.pointee.release(all: false, adding: []), outgrown)
        }
        drop(consume released)
        // A lock-free scan may still read the thread's state, which is freed as it exits.
        waitForScanners()
        if let outgrown { RawMemory.release(outgrown) }
    }

    /// Drops what a retire or reclaim took, after unlocking, and counts it dropped: ``reclaimAll()`` returns
    /// only once what other threads took is dropped too.
    private static func drop(_ released: consuming Released) {
        let count = released.count
        _ = consume released
        guard count > 0 else { return }
        let state = shared.state
        shared.lock.withLock { state.pointee.dropping -= count }
    }

    /// The queue length at which a retiring writer waits for the readers it waits on (``reclaimAll()``): the
    /// bound on memory when a reader stays inside one section indefinitely.
    static let pendingLimit = 1 << 14

    /// What a retire or reclaim releases once the threads' lock is unlocked.
    private struct Released {
        var batches: [Batch] = []
        var registrations: [any Registration] = []

        var count: Int { batches.count + registrations.count }
    }

    /// What one retire left for readers, with the readers it waits for.
    private struct Batch {
        /// The threads inside a section when it was retired, with the counter each had; a thread is
        /// cleared (nil) when it exits.
        var readers: [(thread: UnsafeMutablePointer<stimpak_thread_state>?, seen: UInt)]
        var garbage: Any
        var registrations: [any Registration]

        /// Whether every recorded thread has left the section it was in. Call with the threads' lock held (a
        /// recorded thread's state stays allocated while it is registered).
        var isReady: Bool {
            readers.allSatisfy { reader in
                guard let thread = reader.thread else { return true }
                return stimpak_section_load(thread) != reader.seen
            }
        }
    }

    private struct Shared: ~Copyable, @unchecked Sendable {  // `state` is guarded by `lock`; `words` are atomic
        let lock = Lock()
        let state = RawMemory.allocate(State.self, count: 1)
        let words = AtomicWord.allocate(count: 4)

        init() {
            state.initialize(to: State(words: words))
        }
    }

    /// One `static let` (one lazy-initialization check finds the lock and the state), the state in memory of
    /// its own: reaching an object or an array in a static variable, which the calls out might change as far
    /// as the compiler knows, costs a retain and a release on every disposal. Code reads `shared.state` into a
    /// local before changing what it points to: a change through `shared.state.pointee` is a modifying access
    /// of the global itself, which the thread sanitizer reports as racing with every other access.
    private static let shared = Shared()

    /// The registered threads, the pending batches and the parked registrations; guarded by the threads' lock.
    private struct State {
        /// The registered threads' states' addresses, `count` of them at `threads`, which has room for `capacity`;
        /// written with atomic stores and published in `words` for ``Reclamation/isQuiescent()``.
        var threads: UnsafeMutablePointer<UInt>?
        var count = 0
        var capacity = 0
        let words: AtomicWord
        /// Batches oldest first, from `head` on (the ones before it are released).
        var pending: [Batch] = []
        var head = 0
        /// Ready registrations found on a thread's resolution path: their factories are running.
        var parked: [any Registration] = []
        /// How many batches were ever appended, and released: the queue is first in, first out.
        var appended = 0
        var releasedCount = 0
        /// How many batches and registrations were taken to release and are not yet dropped.
        var dropping = 0

        init(words: AtomicWord) {
            self.words = words
        }

        /// The registered thread at `index`.
        func thread(at index: Int) -> UnsafeMutablePointer<stimpak_thread_state> {
            UnsafeMutablePointer(bitPattern: stimpak_load(threads.unsafelyUnwrapped + index)).unsafelyUnwrapped
        }

        /// Publishes whether batches are pending or registrations parked. Call after changing either.
        mutating func publishBusy() {
            words.advanced(by: Words.busy).store(pending.isEmpty && parked.isEmpty ? 0 : 1)
        }

        // Methods are `mutating`, reached through the pointer: a non-mutating one copies the state (retaining its
        // arrays) on every call.

        mutating func pendingCount() -> Int { pending.count - head }

        /// Whether a registered thread (this one included) is inside a read section.
        @inline(__always)
        mutating func hasReaderInside() -> Bool {
            for index in 0..<count where stimpak_section_load(thread(at: index)) & 1 == 1 { return true }
            return false
        }

        /// The threads inside a read section, with their counters.
        mutating func readersInside() -> [(thread: UnsafeMutablePointer<stimpak_thread_state>?, seen: UInt)] {
            var readers: [(thread: UnsafeMutablePointer<stimpak_thread_state>?, seen: UInt)] = []
            for index in 0..<count {
                let thread = thread(at: index)
                let seen = stimpak_section_load(thread)
                if seen & 1 == 1 { readers.append((thread, seen)) }
            }
            return readers
        }

        /// Whether the oldest pending batch waits for `own`'s open section and for no other thread.
        mutating func frontWaitsOnlyFor(_ own: UnsafeMutablePointer<stimpak_thread_state>) -> Bool {
            guard head < pending.count else { return false }
            var waitsForOwn = false
            for reader in pending[head].readers {
                guard let thread = reader.thread, stimpak_section_load(thread) == reader.seen else { continue }
                if thread != own { return false }
                waitsForOwn = true
            }
            return waitsForOwn
        }

        /// Takes the pending batches (all of them when no thread is inside a section, else the ready ones at
        /// the front of the queue) and the registrations among them, `registrations` and the parked ones that
        /// are on no thread's resolution path; parks the others.
        mutating func release(all: Bool, adding registrations: [any Registration]) -> Released {
            var end = head
            if all {
                end = pending.count
            } else {
                while end < pending.count, pending[end].isReady { end += 1 }
            }
            var released = Released()
            var candidates = parked
            candidates.append(contentsOf: registrations)
            if end > head {
                releasedCount += end - head
                released.batches = Array(pending[head..<end])
                for batch in released.batches { candidates.append(contentsOf: batch.registrations) }
                if end == pending.count {
                    pending.removeAll(keepingCapacity: pending.count <= 64)
                    head = 0
                } else {
                    // Released places are dropped once they are half the queue, not one by one.
                    for index in head..<end { pending[index] = Batch(readers: [], garbage: (), registrations: []) }
                    head = end
                    if head >= pending.count / 2 {
                        pending.removeFirst(head)
                        head = 0
                    }
                }
            }
            if candidates.isEmpty {
                dropping += released.count
                publishBusy()
                return released
            }
            let paths = ResolutionPaths(threads: threads, count: count)
            parked = candidates.filter { paths.contain($0) }
            released.registrations = parked.isEmpty ? candidates : candidates.filter { !paths.contain($0) }
            dropping += released.count
            publishBusy()
            return released
        }

        /// Adds a thread; returns the outgrown list, to free once no scan reads it.
        mutating func add(_ thread: UnsafeMutablePointer<stimpak_thread_state>) -> UnsafeMutablePointer<UInt>? {
            // A grown list is published before the count that needs it.
            let outgrown = count == capacity ? resize(to: Swift.max(16, capacity * 2)) : nil
            stimpak_store(threads.unsafelyUnwrapped + count, UInt(bitPattern: thread))
            count += 1
            words.advanced(by: Words.count).store(UInt(count))
            return outgrown
        }

        /// Removes a thread; returns the outgrown list, to free once no scan reads it (nor the thread's state).
        mutating func remove(_ thread: UnsafeMutablePointer<stimpak_thread_state>) -> UnsafeMutablePointer<UInt>? {
            guard let index = (0..<count).first(where: { self.thread(at: $0) == thread }) else { return nil }
            // The last one takes its place (the order does not matter), then the count drops.
            count -= 1
            stimpak_store(threads.unsafelyUnwrapped + index, stimpak_load(threads.unsafelyUnwrapped + count))
            words.advanced(by: Words.count).store(UInt(count))
            // Threads that came and went cost neither memory nor a later writer's scan.
            let outgrown = capacity > 16 && count <= capacity / 4 ? resize(to: capacity / 2) : nil
            // Its state is freed as it exits: no batch reads it again (and it is outside every section).
            for batchIndex in head..<pending.count {
                for reader in pending[batchIndex].readers.indices where pending[batchIndex].readers[reader].thread == thread {
                    pending[batchIndex].readers[reader].thread = nil
                }
            }
            return outgrown
        }

        /// Moves the list to one with room for `newCapacity` and publishes it; returns the old one, which a
        /// scan may still read.
        private mutating func resize(to newCapacity: Int) -> UnsafeMutablePointer<UInt>? {
            let moved = RawMemory.allocate(UInt.self, count: newCapacity)
            for index in 0..<count { stimpak_store(moved + index, stimpak_load(threads.unsafelyUnwrapped + index)) }
            let old = threads
            threads = moved
            capacity = newCapacity
            words.advanced(by: Words.threads).store(UInt(bitPattern: moved))
            return old
        }
    }
}

/// Every registered thread's resolution path, searched with the threads' lock held so that none exits
/// meanwhile.
struct ResolutionPaths {
    fileprivate let threads: UnsafeMutablePointer<UInt>?
    fileprivate let count: Int

    /// Whether `object` is on some thread's path: the thread is making it or running its factory.
    func contain(_ object: AnyObject) -> Bool {
        let pointer = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
        return (0..<count).contains { index in
            let thread = UnsafeMutablePointer<stimpak_thread_state>(bitPattern: stimpak_load(threads.unsafelyUnwrapped + index))
            return stimpak_path_contains(thread.unsafelyUnwrapped, pointer) != 0
        }
    }
}
