#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CStimpakAtomics

// The lock-free protocol of the resolve path, and all of its atomics (ARCHITECTURE.md gives the argument):
//
// - publish: a writer, holding the container's lock, stores a pointer to a fully built object into an
//   `AtomicWord` (seq-cst). Something else (a registration, a slot, the registry) keeps the object alive.
// - read and pin: a reader enters a `ReadSection` (a seq-cst store to its own counter), loads published
//   words (seq-cst), follows them, and pins what it will use after the section *before* it leaves: it
//   copies (retains) the instance it returns, retains the registration whose slot it will fill, and pushes
//   the transient registration whose factory it calls on its resolution path (its own cache line, no
//   shared write). Leaving is an out-of-line call that the optimizer must assume may release anything, so
//   no retain moves after it.
// - retire: a writer unpublishes (stores 0 or a successor, seq-cst) under the lock, keeps what it unpublished,
//   and after the lock hands it to `Reclamation.retire` (Reclamation.swift).
// - reclaim: `Reclamation` releases it once every thread that was inside a section at the retire has left
//   that section (holding its own references, or with the registration on its path), never waiting for one.
//   A retired registration that is on some thread's path (its factory is running) is parked there until a
//   later retire finds it gone.

/// A machine word shared with lock-free readers: written under the container's lock, read in read sections.
@usableFromInline
struct AtomicWord {
    @usableFromInline let address: UnsafeMutablePointer<UInt>

    @inlinable
    init(_ address: UnsafeMutablePointer<UInt>) {
        self.address = address
    }

    /// Allocates `count` consecutive words set to 0; the owner deallocates them with ``deallocate()`` on the first.
    static func allocate(count: Int) -> AtomicWord {
        // Lines of their own: readers load them on every resolve (see `RawMemory.allocateLines(byteCount:)`).
        let address = RawMemory.allocateLines(byteCount: MemoryLayout<UInt>.stride * count)
            .bindMemory(to: UInt.self, capacity: count)
        // Word by word: the optimizer may turn an allocation and a zeroing loop into `calloc`, slower for a few words.
        for offset in 0..<count { stimpak_store_relaxed(address + offset, 0) }
        return AtomicWord(address)
    }

    /// Frees the words that ``allocate(count:)`` returned this one first of.
    func deallocate() {
        RawMemory.release(address)
    }

    /// The word `offset` words after this one, in the same allocation.
    @inlinable
    func advanced(by offset: Int) -> AtomicWord {
        AtomicWord(address + offset)
    }

    /// Adds `value` atomically (seq-cst); returns the value before.
    func fetchAdd(_ value: UInt) -> UInt {
        UInt(stimpak_fetch_add(address, value))
    }

    @inlinable @inline(__always)
    func load() -> UInt {
        stimpak_load(address)
    }

    func store(_ value: UInt) {
        stimpak_store(address, value)
    }

    /// For words whose stale values are harmless (a hint) or that only the lock's holder reads.
    @inlinable @inline(__always)
    func loadRelaxed() -> UInt {
        stimpak_load_relaxed(address)
    }

    func storeRelaxed(_ value: UInt) {
        stimpak_store_relaxed(address, value)
    }

    /// The published object, unretained: valid until the end of the read section it was loaded in.
    @inlinable @inline(__always)
    func loadPointer() -> UnsafeMutableRawPointer? {
        UnsafeMutableRawPointer(bitPattern: load())
    }

    /// Calls `body` with the published object, unretained, or returns nil when none is published. Call
    /// inside a read section, and keep nothing from `body` that outlives it without retaining it.
    @inlinable @inline(__always)
    func withPublished<Object: AnyObject, Result>(_ type: Object.Type, _ body: (Object) -> Result) -> Result? {
        guard let pointer = loadPointer() else { return nil }
        return Unmanaged<Object>.fromOpaque(pointer)._withUnsafeGuaranteedRef(body)
    }

    /// Publishes `object` (or unpublishes, with nil) without retaining it: its owner keeps it alive until
    /// it is unpublished and retired.
    func publish(_ object: AnyObject?) {
        store(object.map { UInt(bitPattern: Unmanaged.passUnretained($0).toOpaque()) } ?? 0)
    }

    /// Publishes a cached instance (see ``CachedInstance``) without retaining it: the instance itself, or its
    /// box with ``CachedInstance/boxBit`` set. Its cache keeps it alive until it is unpublished and retired.
    func publish(instance object: AnyObject) {
        store(CachedInstance.publishedBits(of: object))
    }

    /// The same, for a publisher that knows whether `object` is a box (no cast asks the runtime).
    func publish(instance object: AnyObject, isBox: Bool) {
        store(CachedInstance.publishedBits(of: object, isBox: isBox))
    }

    /// Publishes `object`, which the word then owns (a retain), in place of nothing.
    func publishOwned(_ object: AnyObject) {
        store(UInt(bitPattern: Unmanaged.passRetained(object).toOpaque()))
    }

    /// Publishes `object`, which the word then owns, in place of what ``publishOwned(_:)`` published, with one
    /// exchange (a reader loads the one or the other), and hands the old reference (or nil) to the caller, who
    /// must retire it (``Reclamation/retire(_:registrations:)``) instead of dropping it.
    func replaceOwned<Object: AnyObject>(with object: Object) -> Object? {
        let bits = stimpak_exchange(address, UInt(bitPattern: Unmanaged.passRetained(object).toOpaque()))
        guard let raw = UnsafeRawPointer(bitPattern: bits) else { return nil }
        return Unmanaged<Object>.fromOpaque(raw).takeRetainedValue()
    }

    /// Unpublishes what ``publishOwned(_:)`` published and hands the reference to the caller, who must
    /// retire it (``Reclamation/retire(_:registrations:)``) instead of dropping it.
    func retireOwned<Object: AnyObject>(_ type: Object.Type) -> Object? {
        guard let raw = UnsafeRawPointer(bitPattern: stimpak_exchange(address, 0)) else { return nil }
        return Unmanaged<Object>.fromOpaque(raw).takeRetainedValue()
    }
}

/// One thread's read section: between ``enter(from:)`` and leaving, what it loads from published words stays
/// allocated. Never held across user code, a lock or a release: a few dozen instructions.
///
/// Not copyable, and every way to leave consumes it: a section is left once, and nothing reads through it
/// after. A function that reads published words takes the section it reads in (`borrowing ReadSection`).
@usableFromInline
struct ReadSection: ~Copyable {
    /// The thread's state (its section counter and resolution path).
    @usableFromInline let thread: UnsafeMutablePointer<stimpak_thread_state>

    @usableFromInline
    init(thread: UnsafeMutablePointer<stimpak_thread_state>) {
        self.thread = thread
    }

    /// Enters this thread's read section (a seq-cst store to the thread's own counter) for a resolve that starts
    /// from `origin`, having made the thread's context, which registers the counter, on its first section. The
    /// section reads `origin`'s words and table, the registry's, and no other scope's: a disposal of `origin`
    /// alone waits only for the sections started from it (``Reclamation/retire(_:)-(Scope.Detached)``).
    @inlinable @inline(__always)
    static func enter(from origin: Scope) -> ReadSection {
        let thread = stimpak_thread_get()
        let bits = UInt(bitPattern: Unmanaged.passUnretained(origin).toOpaque())
        if stimpak_section_enter(thread, bits) != 0 {
            makeThreadContext()
            stimpak_section_enter(thread, bits)
        }
        return ReadSection(thread: thread)
    }

    /// Leaves, keeping nothing.
    @inlinable @inline(__always)
    consuming func leave() {
        stimpak_section_exit(thread)
    }

    /// Copies a published instance (retaining it), then leaves. `published` is the word's bits (see
    /// ``CachedInstance``): a class instance itself, or an `InstanceBox<Service>` with the box bit set.
    @inlinable @inline(__always)
    consuming func leave<Service>(copying published: UnsafeMutableRawPointer, as type: Service.Type) -> Service {
        let bits = UInt(bitPattern: published)
        // Without the bit, the writer cached the instance itself, which it does only for a class `Service`
        // (one word: the size test, which the compiler folds, only makes the cast compile for any `Service`).
        if bits & CachedInstance.boxBit == 0, MemoryLayout<Service>.size == MemoryLayout<AnyObject>.size {
            let pinned = Unmanaged<AnyObject>.fromOpaque(published).retain()
            stimpak_section_exit(thread)
            return unsafeBitCast(pinned.takeRetainedValue(), to: Service.self)
        }
        let box = UnsafeMutableRawPointer(bitPattern: bits & ~CachedInstance.boxBit).unsafelyUnwrapped
        let instance = Unmanaged<InstanceBox<Service>>.fromOpaque(box)._withUnsafeGuaranteedRef { $0.value }
        stimpak_section_exit(thread)
        return instance
    }

    /// Pushes a published registration on this thread's resolution path, with the scope its factory runs for,
    /// then leaves: the path keeps it alive until it is popped (a writer reclaims no registration that is on a
    /// path).
    /// - Returns: 0, or 1 when it was already on the path (a cycle), or 2 when the path is too deep; it
    ///   is pushed only on 0.
    @inlinable @inline(__always)
    consuming func leave(pushing registration: UnsafeMutableRawPointer, for scope: Scope) -> Int32 {
        let status = stimpak_path_enter(
            thread, registration, Unmanaged.passUnretained(scope).toOpaque(), UInt(ResolutionError.maximumDepth))
        stimpak_section_exit(thread)
        return status
    }

    /// Retains a published object (a registration), then leaves: the caller owns the reference.
    @inlinable @inline(__always)
    consuming func leave<Object: AnyObject>(pinning object: UnsafeMutableRawPointer, as type: Object.Type) -> Object {
        let pinned = Unmanaged<Object>.fromOpaque(object).retain()
        stimpak_section_exit(thread)
        return pinned.takeRetainedValue()
    }

    /// Registers the counter of a thread that is about to enter its first section.
    static func register(_ thread: UnsafeMutablePointer<stimpak_thread_state>) {
        Reclamation.register(thread)
    }

    /// Unregisters the counter of a thread that has left its last section (it is exiting).
    static func unregister(_ thread: UnsafeMutablePointer<stimpak_thread_state>) {
        Reclamation.unregister(thread)
    }
}
