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
// container's lock hands it here after unlocking, and never waits for a reader. Grace periods in the manner of
// RCU's `call_rcu` and crossbeam-epoch's bags: one snapshot of the readers covers many retires, so a writer
// under readers pays a few loads and an append, not a scan of every thread.
//
// - retire: the writer reads every registered thread's section counter (seq-cst). When none is odd and nothing
//   waits (no thread is inside a section, the common case), nothing unpublished can still be held: what it
//   retires is released at once, on this thread, with no lock taken (`isQuiescent`: the list of threads is read
//   while the scan is marked, and what leaves the list is freed only once no scan that may have read it is
//   marked). Otherwise, under the threads' lock, it appends what it retires to the current bag. A child scope's
//   disposal (one scope, no open child) counts only the sections started from that scope, the only ones that
//   read its table (see `stimpak_section_enter`, ARCHITECTURE.md): readers elsewhere never hold it back; and
//   none, without a scan, when no thread but the disposing one has read that table (`Scope.soleReaderWord`).
// - grace period: the current bag is sealed, with the odd counters seen then (the readers inside a section),
//   when no other bag is sealed or once it holds `sealingSize` retires; a bag's grace period is over once each
//   thread it recorded has moved its counter on (left that section) or exited. A retire releases the sealed
//   bags at the front of the queue whose grace period is over (a load per recorded thread, stopping at the
//   first one still inside), then appends, then seals if it is time: a scan of every counter. A scan that
//   finds no thread inside releases the bag at once. `reclaimAll()` (tests, leak checks) waits for the
//   readers, then releases everything.
// - A retired registration is released only once its bag is and it is on no thread's resolution path (its
//   factory may be running); until then it is parked here and looked for again at each retire.
//
// Why sealing late is safe: what a bag holds was unpublished before it was appended, so before the bag was
// sealed. A reader that can still hold it entered its section before that unpublishing store; if it is still
// inside at the seal, the seal records it, and if it has left, it holds nothing.
//
// Why the front is enough: bags are sealed in order under the lock. A thread recorded in an older bag with
// counter s is, when a newer bag is sealed, either still at s (recorded there too) or past it. So a bag whose
// grace period is over has predecessors whose periods are over: they end in queue order.
//
// Why garbage stays bounded: a bag waits only for sections that were open when it was sealed, and a section
// runs no factory, callback or lock (only a key's `==`), so every grace period ends within one section's
// length, a time slice when its reader is preempted, and the next retire releases the bag. Should a reader
// stay inside a section for as long as it takes `pendingLimit` retires to pile up (a debugger holding it), the
// retiring writer waits for that reader (`reclaimAll`) as a last resort, which bounds memory.

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
        retireLater(garbage, registrations: registrations)
    }

    /// Releases `garbage` once no reader can still hold what it unpublished (see
    /// ``retire(_:registrations:)``); the common case in line, with no array of registrations to make.
    @inline(__always)
    static func retire<Garbage>(_ garbage: consuming Garbage) {
        if isQuiescent() {
            _ = consume garbage
            return
        }
        retireLater(garbage, registrations: [])
    }

    /// Releases what a scope's disposal took, as the generic ``retire(_:)`` does, but waits only for the sections
    /// that may read it: for one child scope's state (a request's), those started from that scope
    /// (``Scope/Detached/origin``), not every thread resolving elsewhere, and none, without a scan, when only
    /// the disposing thread read the scope's table. Then, when retires wait, moves their
    /// grace periods on. What waits for readers is kept as ``Scope/Detached/garbage()`` gives it, a request
    /// scope's table without a box.
    @inline(__always)
    static func retire(_ detached: consuming Scope.Detached) {
        let origin = detached.origin
        guard origin != unreadOrigin, isAnyReaderInside(from: origin) else {
            _ = consume detached
            if retiresWait() { collect() }
            return
        }
        retireLater(detached.garbage(), registrations: [])
    }

    /// A retire's origin for what any section may read (see ``Scope/Detached/origin``).
    static let anyOrigin: UInt = 0
    /// A retire's origin for what no section can hold: released without a scan.
    static let unreadOrigin: UInt = 1

    /// Moves the grace periods on and releases the bags whose period is over, when the threads' lock is free: a
    /// retire that released its own garbage at once does this for those that wait, so that they are released by
    /// later writers as they would be by later retires that wait.
    @inline(never)
    private static func collect() {
        guard shared.lock.tryLock() else { return }
        let state = shared.state
        let released = state.pointee.advance()
        shared.lock.unlock()
        drop(consume released)
    }

    /// Whether nothing waits to be released and no registered thread is inside a read section, read without
    /// the threads' lock (a disposal on every request takes no lock of this module's besides the container's).
    @inline(__always)
    private static func isQuiescent() -> Bool {
        !retiresWait() && !isAnyReaderInside()
    }

    /// Whether bags or registrations wait to be released, or retires wait on ``Words/incoming``.
    @inline(__always)
    private static func retiresWait() -> Bool {
        let words = shared.words
        return words.advanced(by: Words.busy).load() | words.advanced(by: Words.incoming).load() != 0
    }

    /// Whether a registered thread is inside a read section now, read without the threads' lock. Any thread,
    /// any lock held.
    ///
    /// The scan reads the registered threads' list, and their states, while the list may change: a thread that
    /// leaves it (it is exiting, and its state is freed with it) and a list that is replaced are freed only
    /// once no scan that may have read them is under way (``waitForScanners()``). A registered thread marks its
    /// own scans in its own state (`scanning`: 3 while it scans), so that a scan writes no line that other
    /// threads write; a thread that is not registered (one that never resolved, or is exiting) counts its scan in
    /// the shared `scanners` word instead. Either mark is a seq-cst store or read-modify-write before the scan's
    /// seq-cst loads, and a change to the list is a seq-cst store before the changer reads the marks: either
    /// the changer sees the mark and waits, or the scan reads the list after the change. `count` is read before
    /// the list's address: a list that grows is published before the count that needs it, one that shrinks
    /// after the count.
    ///
    /// With `origin` (a scope's address, see ``Scope/Detached/origin``), only the sections that may read that
    /// scope's table count: those started from it, or in which a nested one started (its origin is read after
    /// its counter, see `stimpak_section_enter`).
    @inline(__always)
    static func isAnyReaderInside(from origin: UInt = anyOrigin) -> Bool {
        let words = shared.words
        let own = stimpak_thread_get()
        // Only this thread writes its own word: 0 until it is registered.
        let isRegistered = stimpak_scanning_load(own) != 0
        let scanners = words.advanced(by: Words.scanners).address
        if isRegistered { stimpak_scanning_store(own, 3) } else { stimpak_fetch_add(scanners, 1) }
        let count = Int(words.advanced(by: Words.count).load())
        let threads = UnsafeMutablePointer<UInt>(bitPattern: words.advanced(by: Words.threads).load())
        var isInside = false
        // From where the last scan found a reader inside, round to it: one the scheduler preempted inside its
        // section is still there, and each other counter costs a load of a line its thread keeps writing.
        var index = Int(own.pointee.scan_hint)
        for _ in 0..<count {
            if index >= count { index = 0 }
            let thread = UnsafeMutablePointer<stimpak_thread_state>(bitPattern: stimpak_load(threads.unsafelyUnwrapped + index))
            if stimpak_section_load(thread.unsafelyUnwrapped) & 1 == 1,
                origin == anyOrigin || stimpak_section_may_read(thread.unsafelyUnwrapped, origin) != 0
            {
                isInside = true
                own.pointee.scan_hint = UInt(index)
                break
            }
            index += 1
        }
        if isRegistered { stimpak_scanning_store(own, 2) } else { stimpak_fetch_sub(scanners, 1) }
        return isInside
    }

    /// Waits until no lock-free scan (``isAnyReaderInside()``) that may have read the list before the last change
    /// to it is under way, so that what the change took out of it (a thread's state, an outgrown list) can be
    /// freed: the shared count is 0, and each other registered thread's mark has been seen below 3 once (a scan
    /// that thread starts after that reads the changed list). Call without the threads' lock, on the thread that
    /// changed the list. Threads register and exit rarely; a scan is a few dozen loads.
    private static func waitForScanners() {
        let own = stimpak_thread_get()
        let scanners = shared.words.advanced(by: Words.scanners)
        let state = shared.state
        var seen: Set<UnsafeMutablePointer<stimpak_thread_state>> = [own]
        while scanners.load() != 0 { sched_yield() }
        // Under the lock: no registered thread exits (and frees its state) while its mark is read.
        while shared.lock.withLock({ state.pointee.isScanning(besides: &seen) }) { sched_yield() }
    }

    /// The words ``isQuiescent()`` reads without the lock, written under it.
    private enum Words {
        /// The address of the registered threads' list (their states' addresses).
        static let threads = 0
        /// How many threads are registered.
        static let count = 1
        /// How many lock-free scans by threads that are not registered are under way.
        static let scanners = 2
        /// 1 while bags wait or registrations are parked: the slow path collects them.
        static let busy = 3
        /// The top of the stack of ``Incoming`` retires (its `Unmanaged` bits, retained), 0 when it is empty.
        static let incoming = 4
        /// How many retires are on that stack, or about to be pushed.
        static let incomingCount = 5
        /// How many garbage items and registrations were taken to release and are not yet dropped.
        static let dropping = 6
        static let total = 7
    }

    /// ``retire(_:registrations:)`` past its common case: appends to the current bag under the threads' lock when
    /// it is free, else pushes onto ``Words/incoming`` for the lock's next holder, so that a retire never waits
    /// for a holder the scheduler preempted. Only when that stack holds `pendingLimit` retires (the holder has
    /// been away that long) does it wait for the lock, which bounds memory.
    @inline(never)
    private static func retireLater<Garbage>(_ garbage: consuming Garbage, registrations: consuming [any Registration]) {
        if shared.lock.tryLock() {
            enqueue(garbage, registrations: registrations)
            return
        }
        let words = shared.words
        let count = words.advanced(by: Words.incomingCount)
        guard count.fetchAdd(1) < UInt(pendingLimit) else {
            stimpak_fetch_sub(count.address, 1)
            shared.lock.lock()
            enqueue(garbage, registrations: registrations)
            return
        }
        let node = Incoming(garbage: garbage, registrations: registrations)
        let bits = UInt(bitPattern: Unmanaged.passRetained(node).toOpaque())
        let top = words.advanced(by: Words.incoming).address
        // A push onto a stack that is only ever emptied whole (`takeIncoming`): no ABA, the top read is only
        // stored in the node being pushed, never dereferenced.
        var below = stimpak_load(top)
        repeat { node.below = below } while stimpak_compare_exchange(top, &below, bits) == 0
    }

    /// A retire that found the threads' lock taken, on the ``Words/incoming`` stack until the lock's next holder
    /// takes it into the current bag (``State/takeIncoming()``).
    private final class Incoming {
        let garbage: Any
        let registrations: [any Registration]
        /// The retire below it on the stack (its `Unmanaged` bits, the reference the stack held), 0 at the bottom;
        /// written only before the push that publishes this one.
        var below: UInt = 0

        init(garbage: Any, registrations: [any Registration]) {
            self.garbage = garbage
            self.registrations = registrations
        }
    }

    /// Appends to the current bag and moves the grace periods on. Call with the threads' lock held; returns with
    /// it released.
    private static func enqueue<Garbage>(_ garbage: consuming Garbage, registrations: consuming [any Registration]) {
        let state = shared.state
        state.pointee.current.append(garbage)
        if !registrations.isEmpty { state.pointee.currentRegistrations.appendMoving(registrations) }
        state.pointee.appended += 1
        let released = state.pointee.advance()
        let isOverLimit = state.pointee.pendingRetires() >= pendingLimit
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
        let dropping = shared.words.advanced(by: Words.dropping)
        shared.lock.lock()
        state.pointee.takeIncoming()
        let target = state.pointee.appended
        while true {
            let released = state.pointee.advance()
            // The oldest sealed bag can't be released here while it waits for this thread's own open section (a
            // key's `==` that called this).
            // What this thread is dropping (a deinit that it runs called this) is not waited for.
            let isDone =
                state.pointee.releasedCount >= target && dropping.load() == stimpak_own_counts_address().pointee
                || state.pointee.sealedWaitsOnlyFor(own)
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
            return (state.pointee.advance(), outgrown)
        }
        drop(consume released)
        // A lock-free scan may still read the thread's state, which is freed as it exits.
        waitForScanners()
        if let outgrown { RawMemory.release(outgrown) }
    }

    /// Drops what a retire or reclaim took, after unlocking, and counts it dropped: ``reclaimAll()`` returns
    /// only once what other threads took is dropped too.
    private static func drop(_ released: consuming Released) {
        let count = UInt(released.count)
        guard count > 0 else { return }
        // Counted as this thread's while its deinits run: one of them may call `reclaimAll()`.
        let own = stimpak_own_counts_address()
        own.pointee += count
        _ = consume released
        own.pointee -= count
        stimpak_fetch_sub(shared.words.advanced(by: Words.dropping).address, count)
    }

    /// The number of retires waiting (in the bags) at which a retiring writer waits for the readers they wait
    /// on (``reclaimAll()``): the bound on memory when a reader stays inside one section indefinitely.
    static let pendingLimit = 1 << 15

    /// How many retires the current bag takes before it is sealed behind another: one scan of the counters per
    /// that many retires, and what a retire waits beyond its grace period.
    static let sealingSize = 64

    /// What a retire or reclaim releases once the threads' lock is unlocked.
    private struct Released {
        var bags: [Bag] = []
        var garbage: [Any] = []
        var registrations: [any Registration] = []

        /// What ``Words/dropping`` counts for it.
        var count: Int { bags.count + garbage.count + registrations.count }
    }

    /// What retires left for readers, sealed with the readers it waits for.
    private struct Bag {
        /// The threads inside a section when it was sealed, with the counter each had; a thread is cleared
        /// (nil) when it exits.
        var readers: [(thread: UnsafeMutablePointer<stimpak_thread_state>?, seen: UInt)]
        var garbage: [Any]
        var registrations: [any Registration]
        /// How many retires it holds.
        var retires: Int

        /// Whether every recorded thread has left the section it was in. Call with the threads' lock held (a
        /// recorded thread's state stays allocated while it is registered).
        var isOver: Bool {
            readers.allSatisfy { reader in
                guard let thread = reader.thread else { return true }
                return stimpak_section_load(thread) != reader.seen
            }
        }
    }

    private struct Shared: ~Copyable, @unchecked Sendable {  // `state` is guarded by `lock`; `words` are atomic
        let lock = Lock()
        let state = RawMemory.allocate(State.self, count: 1)
        let words = AtomicWord.allocate(count: Words.total)

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

    /// The registered threads, the bags and the parked registrations; guarded by the threads' lock.
    private struct State {
        /// The registered threads' states' addresses, `count` of them at `threads`, which has room for `capacity`;
        /// written with atomic stores and published in `words` for ``Reclamation/isQuiescent()``.
        var threads: UnsafeMutablePointer<UInt>?
        var count = 0
        var capacity = 0
        let words: AtomicWord
        /// What was retired since the last bag was sealed.
        var current: [Any] = []
        var currentRegistrations: [any Registration] = []
        /// The bags whose grace periods run, oldest first, from `head` on (the ones before it are released).
        var sealed: [Bag] = []
        var head = 0
        /// Ready registrations found on a thread's resolution path: their factories are running.
        var parked: [any Registration] = []
        /// How many retires were ever appended to a bag, and released: bags are released in order.
        var appended = 0
        var releasedCount = 0

        init(words: AtomicWord) {
            self.words = words
        }

        /// The registered thread at `index`.
        func thread(at index: Int) -> UnsafeMutablePointer<stimpak_thread_state> {
            UnsafeMutablePointer(bitPattern: stimpak_load(threads.unsafelyUnwrapped + index)).unsafelyUnwrapped
        }

        /// Publishes whether bags wait or registrations are parked. Call after changing either.
        mutating func publishBusy() {
            words.advanced(by: Words.busy).store(head == sealed.count && current.isEmpty && parked.isEmpty ? 0 : 1)
        }

        // Methods are `mutating`, reached through the pointer: a non-mutating one copies the state (retaining its
        // arrays) on every call.

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

        /// Whether a registered thread not in `seen` scans the list now (its mark is 3); adds those that do not.
        mutating func isScanning(besides seen: inout Set<UnsafeMutablePointer<stimpak_thread_state>>) -> Bool {
            var isScanning = false
            for index in 0..<count {
                let thread = thread(at: index)
                guard !seen.contains(thread) else { continue }
                if stimpak_scanning_load(thread) == 3 { isScanning = true } else { seen.insert(thread) }
            }
            return isScanning
        }

        /// The retires not released yet.
        mutating func pendingRetires() -> Int { appended - releasedCount }

        /// Moves the retires pushed on ``Words/incoming`` into the current bag. What they hold was unpublished
        /// before the push, so before this: the bag's seal covers it as it covers a retire appended directly.
        mutating func takeIncoming() {
            let top = words.advanced(by: Words.incoming).address
            // Loaded first: an exchange would take the line from the readers' caches on every advance.
            guard stimpak_load(top) != 0 else { return }
            var bits = stimpak_exchange(top, 0)
            var taken: UInt = 0
            while let pointer = UnsafeRawPointer(bitPattern: bits) {
                let node = Unmanaged<Incoming>.fromOpaque(pointer).takeRetainedValue()
                bits = node.below
                current.append(node.garbage)
                if !node.registrations.isEmpty { currentRegistrations.append(contentsOf: node.registrations) }
                taken += 1
            }
            appended += Int(taken)
            stimpak_fetch_sub(words.advanced(by: Words.incomingCount).address, taken)
        }

        /// Whether the oldest sealed bag waits for `own`'s open section and for no other thread.
        mutating func sealedWaitsOnlyFor(_ own: UnsafeMutablePointer<stimpak_thread_state>) -> Bool {
            guard head < sealed.count else { return false }
            var waitsForOwn = false
            for reader in sealed[head].readers {
                guard let thread = reader.thread, stimpak_section_load(thread) == reader.seen else { continue }
                if thread != own { return false }
                waitsForOwn = true
            }
            return waitsForOwn
        }

        /// Moves the grace periods on: takes the sealed bags at the front whose grace period is over, then seals
        /// the current bag with the readers inside a section now when no bag is sealed or it is full, or takes it
        /// too when there are none. Takes the registrations of what it takes, and the parked ones, that are on no
        /// thread's resolution path; parks the others.
        mutating func advance() -> Released {
            takeIncoming()
            var released = Released()
            var candidates: [any Registration] = []
            var end = head
            while end < sealed.count, sealed[end].isOver { end += 1 }
            if end > head {
                released.bags.reserveCapacity(end - head)
                for index in head..<end {
                    // Moved out, not copied: the place keeps an empty bag until the queue is compacted.
                    var bag = Bag(readers: [], garbage: [], registrations: [], retires: 0)
                    swap(&bag, &sealed[index])
                    releasedCount += bag.retires
                    candidates.appendMoving(bag.registrations)
                    released.bags.append(bag)
                }
                head = end
                if head == sealed.count {
                    sealed.removeAll(keepingCapacity: sealed.count <= 64)
                    head = 0
                } else if head >= sealed.count / 2 {
                    sealed.removeFirst(head)
                    head = 0
                }
            }
            if !current.isEmpty, head == sealed.count || current.count >= Reclamation.sealingSize {
                let readers = readersInside()
                if readers.isEmpty && head == sealed.count {
                    // Nothing unpublished can still be held: the current bag is released now.
                    swap(&released.garbage, &current)
                    candidates.appendMoving(currentRegistrations)
                    releasedCount += released.garbage.count
                } else {
                    var garbage: [Any] = []
                    swap(&garbage, &current)
                    sealed.append(Bag(readers: readers, garbage: garbage, registrations: currentRegistrations, retires: garbage.count))
                }
                currentRegistrations = []
            }
            if !parked.isEmpty {
                candidates.appendMoving(parked)
                parked = []
            }
            if !candidates.isEmpty {
                let paths = ResolutionPaths(threads: threads, count: count)
                if candidates.contains(where: { paths.contain($0) }) {
                    for registration in candidates {
                        if paths.contain(registration) { parked.append(registration) } else { released.registrations.append(registration) }
                    }
                } else {
                    // No factory of theirs runs (the common case): released as they are, without a copy.
                    released.registrations = candidates
                }
            }
            if released.count > 0 { stimpak_fetch_add(words.advanced(by: Words.dropping).address, UInt(released.count)) }
            publishBusy()
            return released
        }

        /// Adds a thread; returns the outgrown list, to free once no scan reads it.
        mutating func add(_ thread: UnsafeMutablePointer<stimpak_thread_state>) -> UnsafeMutablePointer<UInt>? {
            // A grown list is published before the count that needs it.
            let outgrown = count == capacity ? resize(to: Swift.max(16, capacity * 2)) : nil
            // Registered: its scans are marked in its own state from now on.
            stimpak_scanning_store(thread, 2)
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
            // Its later scans (a deinit its exit runs may retire) are counted in `scanners`: no thread reads its mark.
            stimpak_scanning_store(thread, 0)
            // Threads that came and went cost neither memory nor a later writer's scan.
            let outgrown = capacity > 16 && count <= capacity / 4 ? resize(to: capacity / 2) : nil
            // Its state is freed as it exits: no bag reads it again (it is outside every section).
            for bag in head..<sealed.count {
                for reader in sealed[bag].readers.indices where sealed[bag].readers[reader].thread == thread {
                    sealed[bag].readers[reader].thread = nil
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

extension Array {
    /// Appends `other`, taking it as it is when this array is empty (no copy).
    fileprivate mutating func appendMoving(_ other: [Element]) {
        if isEmpty { self = other } else { append(contentsOf: other) }
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
