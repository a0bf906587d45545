/// Where one reused instance lives: nothing yet, being made by some thread, or made.
///
/// Not generic, so that the locked path, which runs unspecialized, makes one without a metadata lookup.
final class Slot {  // guarded by the container's lock
    enum State {
        case empty
        /// Being made on the thread of the context.
        case creating(ResolutionContext)
        /// Made and cached (see ``CachedInstance``), its `resolved` callback still running: the creating
        /// thread gets it, others wait.
        case initializing(AnyObject, ResolutionContext)
        /// Made; the cached instance (see ``CachedInstance``) is what the lock-free path publishes.
        case created(AnyObject)
        /// Being made by an `async` factory: tasks that want it await the creation (no thread blocks).
        case creatingAsync(AsyncCreation)
    }

    @exclusivity(unchecked) var state: State = .empty
    /// For the live report: the registration (`any Registration`), the scope that owns the slot (a scope
    /// below may hold it too, to publish a `.scopedTo` instance), and the creation's number in the container.
    /// Set when the instance is stored.
    @exclusivity(unchecked) var registration: AnyObject?
    @exclusivity(unchecked) var owner: ObjectIdentifier?
    @exclusivity(unchecked) var creation = 0
    /// What other threads wait on while the state is `.creating` or `.initializing`; made by the first.
    @exclusivity(unchecked) private var flight: InFlight?

    /// The flight to wait on for the creation under way, attached on first use. Call with the lock held,
    /// while the state is `.creating` or `.initializing`.
    func flight(of resolver: any Registration) -> InFlight? {
        if let flight { return flight }
        switch state {
        case .creating(let owner), .initializing(_, let owner):
            let attached = InFlight(owner: owner, resolver: resolver)
            flight = attached
            return attached
        case .empty, .created, .creatingAsync:
            return nil
        }
    }

    /// Ends a creation: sets `state` and returns the flight that other threads wait on, which the caller
    /// finishes once it has released the lock. Call with the lock held.
    func settle(_ state: State) -> InFlight? {
        defer { flight = nil }
        self.state = state
        return flight
    }
}

/// How a cache keeps a reused instance, and publishes it for the lock-free path: a class instance as itself
/// (one strong reference: nothing to allocate), anything else (a value, an existential) in an
/// ``InstanceBox``, so that it is one word whatever `Service` is.
///
/// The published word says which: its low bit (``boxBit``, free in an object's address) is set for a box.
/// The writer decides, from the object it caches (`is AnyInstanceBox`), and the reader follows the bit, so
/// the two cannot disagree about a type, whatever the optimizer folds where.
@usableFromInline
enum CachedInstance {
    /// The bit of a published word that marks an ``InstanceBox``.
    @usableFromInline static let boxBit: UInt = 1

    /// Whether an instance of `Service` is cached as itself: `Service` is a class, so its value is one strong
    /// reference. (A class-bound protocol's existential carries witness tables: boxed.)
    static func isItself<Service>(_ type: Service.Type) -> Bool {
        Service.self is AnyClass && MemoryLayout<Service>.size == MemoryLayout<AnyObject>.size
    }

    /// What caches `value` (a `provide`d one): itself or a new box. A registration decides once, with
    /// ``ServiceRegistration/cached(_:)``.
    static func object<Service>(for value: Service) -> AnyObject {
        isItself(Service.self) ? unsafeBitCast(value, to: AnyObject.self) : InstanceBox(value)
    }

    /// The word that publishes `object`, a cached instance: its address, with ``boxBit`` for a box.
    static func publishedBits(of object: AnyObject) -> UInt {
        publishedBits(of: object, isBox: object is AnyInstanceBox)
    }

    /// The same, when the publisher knows whether `object` is a box (no cast asks the runtime).
    static func publishedBits(of object: AnyObject, isBox: Bool) -> UInt {
        UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque()) | (isBox ? boxBit : 0)
    }
}

/// What every ``InstanceBox`` is, whatever its `Service`: so that publishing tells a box from an instance.
@usableFromInline
class AnyInstanceBox {
    @usableFromInline init() {}
}

/// A cached value or existential (see ``CachedInstance``), boxed so that the lock-free path can publish it as
/// one word.
@usableFromInline
final class InstanceBox<Service>: AnyInstanceBox {
    @usableFromInline let value: Service

    /// Required, so that a registration can make boxes through the metatype it stored (see
    /// ``ServiceRegistration/boxType``) instead of looking the generic metadata up on every creation.
    required init(_ value: Service) {
        self.value = value
    }
}

/// A `.weak` instance: the cache holds it weakly, so it lives only while someone else holds it. Immutable:
/// published for the lock-free path like a cached instance, and replaced (retired, then released after the
/// readers) when its instance is gone.
final class WeakBox {
    weak let object: AnyObject?

    init(_ object: AnyObject) {
        self.object = object
    }
}

/// One registration's instances in one scope when a comparator decides which instance a call gets: one
/// slot per class of equal arguments (a list searched with the comparator, or a hash table).
final class InstanceCache<Args>: SlotHolder {  // guarded by the container's lock
    /// Append-only, so a search that ran outside the lock only needs to look at what was added since.
    var compared: [(arguments: Args, slot: Slot)] = []
    var hashed: [AnyHashable: Slot] = [:]
    /// The slot used before the registration was given a comparator, kept so that its instance lives
    /// as long as the scope, like every cached instance.
    var earlier: Slot?

    var slots: [Slot] {
        (earlier.map { [$0] } ?? []) + hashed.values + compared.map(\.slot)
    }
}

/// A cache of several slots, seen without its argument type (for the live report).
protocol SlotHolder: AnyObject {
    var slots: [Slot] { get }
}

/// How a reused registration decides which cached instance a call with given arguments gets.
enum ArgumentMatching<Args> {
    /// One instance, made with the first call's arguments (the documented Stimpak behaviour).
    case ignored
    /// One instance per class of arguments equal under the comparator.
    case compared((Args, Args) -> Bool)
    /// One instance per distinct hashable value of the arguments.
    case hashed((Args) -> AnyHashable)
}

/// A cached instance's disposal, recorded when it is created.
struct DisposalRecord {
    let key: ServiceKey
    /// The slot the instance was cached in, to find the record again if the instance is evicted; nil for
    /// a tracked transient.
    let slot: Slot?
    let hook: Hook

    enum Hook {
        case sync(() throws -> Void)
        case async(() async throws -> Void)
    }

    init(key: ServiceKey, slot: Slot?, dispose: @escaping () throws -> Void) {
        self.key = key
        self.slot = slot
        hook = .sync(dispose)
    }

    init(key: ServiceKey, slot: Slot?, disposeAsync: @escaping () async throws -> Void) {
        self.key = key
        self.slot = slot
        hook = .async(disposeAsync)
    }

    var isAsync: Bool {
        if case .async = hook { return true }
        return false
    }

    /// Runs a synchronous hook; an asynchronous one is started in a task of its own (its failure is lost).
    func dispose() throws {
        switch hook {
        case .sync(let body): try body()
        case .async: Self.runDetached([self])
        }
    }

    func disposeAwaiting() async throws {
        switch hook {
        case .sync(let body): try body()
        case .async(let body): try await body()
        }
    }

    /// Runs the asynchronous hooks of `records`, in order, in one task, for a synchronous disposal.
    static func runDetached(_ records: [DisposalRecord]) {
        let hooks = UncheckedSendable(records.compactMap { record -> (() async throws -> Void)? in
            if case .async(let body) = record.hook { return body }
            return nil
        })
        Task {
            for hook in hooks.value { try? await hook() }
        }
    }
}

extension DisposalRecord {
    /// A decorated instance's record: runs `outermost` (the record of the instance handed out, if it has one),
    /// then disposes `layers`, the layers under it, in order (outermost first). Each runs when one before it
    /// throws; the first error is the one reported.
    init(key: ServiceKey, slot: Slot?, disposing outermost: DisposalRecord?, then layers: [InstanceDisposal]) {
        let isAsync = outermost?.isAsync == true || layers.contains { if case .async = $0 { true } else { false } }
        guard isAsync else {
            let body: (() throws -> Void)?
            if case .sync(let outer)? = outermost?.hook { body = outer } else { body = nil }
            self.init(key: key, slot: slot, dispose: {
                var failure: (any Error)?
                do { try body?() } catch { failure = error }
                for case .sync(let layer) in layers {
                    do { try layer.dispose() } catch { failure = failure ?? error }
                }
                if let failure { throw failure }
            })
            return
        }
        self.init(key: key, slot: slot, disposeAsync: {
            var failure: (any Error)?
            do { try await outermost?.disposeAwaiting() } catch { failure = error }
            for layer in layers {
                do {
                    switch layer {
                    case .sync(let disposable): try disposable.dispose()
                    case .async(let disposable): try await disposable.dispose()
                    case .none: break
                    }
                } catch {
                    failure = failure ?? error
                }
            }
            if let failure { throw failure }
        })
    }
}

extension InstanceDisposal {
    /// How `value`, a layer of a decorated instance, disposes itself.
    static func of<Value>(_ value: Value) -> InstanceDisposal {
        if let disposable = value as? any Disposable { return .sync(disposable) }
        if let disposable = value as? any AsyncDisposable { return .async(disposable) }
        return .none
    }

    /// The object that disposes itself; nil for `.none`.
    var object: AnyObject? {
        switch self {
        case .none: nil
        case .sync(let disposable): disposable
        case .async(let disposable): disposable
        }
    }

    /// The `layers` of a decorated instance (innermost first) that dispose themselves, outermost first, each
    /// object once and none that is `outermost`: a decorator that returns the instance it got adds no layer,
    /// so that instance is disposed once.
    static func distinct<Service>(_ layers: [InstanceDisposal], under outermost: Service) -> [InstanceDisposal] {
        var seen = of(outermost).object.map { [ObjectIdentifier($0)] } ?? []
        var distinct: [InstanceDisposal] = []
        for layer in layers.reversed() {
            guard let object = layer.object, !seen.contains(ObjectIdentifier(object)) else { continue }
            seen.append(ObjectIdentifier(object))
            distinct.append(layer)
        }
        return distinct
    }
}

extension DisposeHook {
    /// Whether the hook replaces the instance's own `dispose()` (and so its layers').
    var replacesDispose: Bool {
        switch self {
        case .sync(_, let replaces), .async(_, let replaces): replaces
        }
    }
}

/// A value handed to another task that only that task uses from then on.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// A child scope's caches by registration index: a ``Slot`` (arguments ignored) or an ``InstanceCache``
/// (a comparator), and for a slot the instance published for the lock-free path (see ``CachedInstance``).
/// A registration that needs no slot's states keeps its instance in the entry itself, with its registration
/// and creation number, and the creating thread's context marks the entry while it is made (see
/// ``Scope/resolveInTable(_:_:owner:)``).
///
/// Open addressing over the entries allocated at the end of the table's own object (one allocation). The
/// locked path inserts and publishes under the container's lock; the lock-free path probes inside a read
/// section, so the words it reads (`index`, `box`) are atomic, an entry's `box` is stored after its
/// `index`, and nothing is ever removed. When the table is three quarters full the scope publishes a larger
/// copy that takes over the references and keeps the old one, which stays readable until the scope is disposed.
///
/// The header and the entries are reached through pointers, not through `ManagedBuffer.header`, so that no
/// access goes through the runtime's exclusivity checks: the container's lock keeps writers apart.
final class ScopeTable: ManagedBuffer<ScopeTableHeader, ScopeTableEntry> {
    typealias Entry = ScopeTableEntry
    /// What an entry says of an instance it keeps as it is (see ``keep(_:isBox:of:creation:for:)``).
    typealias Kept = (registration: AnyObject, creation: Int)

    private static let empty = UInt.max

    /// A table of `capacity` (a power of two) empty entries.
    static func make(capacity: Int) -> ScopeTable {
        let table = unsafeDowncast(
            create(minimumCapacity: capacity) { _ in ScopeTableHeader(size: capacity) }, to: ScopeTable.self)
        table.entries.initialize(repeating: Entry(index: empty, box: 0, cache: nil, registration: nil, creation: 0), count: capacity)
        assert(ScopeTableHeader.stateOffset == MemoryLayout<ScopeTableHeader>.offset(of: \.state))
        return table
    }

    /// A copy of `old` with twice its capacity, which takes over `old`'s references and keeps it alive.
    static func make(growing old: ScopeTable) -> ScopeTable {
        let table = make(capacity: old.size * 2)
        let oldEntries = old.entries
        for position in 0..<old.size where oldEntries[position].index != empty {
            table.entries[table.probe(oldEntries[position].index)] = oldEntries[position]
            table.state.pointee.count += 1
        }
        old.state.pointee.ownsCaches = false
        table.state.pointee.replaced = old
        return table
    }

    deinit {
        let entries = self.entries
        let size = self.size
        if state.pointee.ownsCaches {
            for position in 0..<size {
                entries[position].cache?.release()
                entries[position].registration?.release()
            }
        }
        entries.deinitialize(count: size)
    }

    @inline(__always)
    private var fields: UnsafeMutablePointer<ScopeTableHeader> {
        withUnsafeMutablePointerToHeader { $0 }
    }

    @inline(__always)
    private var entries: UnsafeMutablePointer<Entry> {
        withUnsafeMutablePointerToElements { $0 }
    }

    /// The fields only the lock's holder reads and writes, through a pointer of their own: an access through
    /// `fields.pointee` covers the whole header, `size` included, which lock-free readers read meanwhile (the
    /// thread sanitizer reports such an overlap as a Swift access race).
    @inline(__always)
    private var state: UnsafeMutablePointer<ScopeTableState> {
        (UnsafeMutableRawPointer(fields) + ScopeTableHeader.stateOffset).assumingMemoryBound(to: ScopeTableState.self)
    }

    /// The number of entries: fixed when the table is made, so lock-free readers may read it.
    @inline(__always)
    private var size: Int { fields.pointee.size }

    /// Where the probe for `index` starts: Fibonacci hashing, since indices are consecutive integers.
    @inline(__always)
    private func start(_ index: UInt) -> Int {
        Int(truncatingIfNeeded: (index &* 0x9E37_79B9_7F4A_7C15) >> 32) & (size - 1)
    }

    @inline(__always)
    private func words(at position: Int) -> UnsafeMutablePointer<UInt> {
        // `index` and `box` are the entry's first two words.
        UnsafeMutableRawPointer(entries + position).assumingMemoryBound(to: UInt.self)
    }

    /// The position of `index`'s entry, or of the empty entry where it would go. Call with the lock held.
    private func probe(_ index: UInt) -> Int {
        let entries = self.entries
        let mask = size - 1
        var position = start(index)
        while entries[position].index != index, entries[position].index != Self.empty {
            position = (position + 1) & mask
        }
        return position
    }

    /// The cache of the registration with `index`, or nil. Call with the container's lock held.
    func cache(for index: Int) -> AnyObject? {
        entries[probe(UInt(index))].cache?.takeUnretainedValue()
    }

    /// The cache of the registration with `index` (unretained: the table holds it) and, when it is an instance
    /// kept as it is, its creation number (else 0). Call with the container's lock held.
    func entry(for index: Int) -> (cache: Unmanaged<AnyObject>, creation: Int)? {
        let entry = entries + probe(UInt(index))
        guard let cache = entry.pointee.cache else { return nil }
        return (cache, entry.pointee.creation)
    }

    /// Every cache the table holds, and for an instance kept as it is, its registration and creation number.
    /// Call with the container's lock held.
    var caches: [(cache: AnyObject, kept: Kept?)] {
        let entries = self.entries
        return (0..<size).compactMap { position in
            let entry = entries[position]
            guard let cache = entry.cache else { return nil }
            return (cache.takeUnretainedValue(), entry.registration.map { ($0.takeUnretainedValue(), entry.creation) })
        }
    }

    /// Whether another entry fits without growing past three quarters full: a probe always ends at an
    /// empty entry, and a scope's first three caches fit in the smallest table (4 entries, 160 bytes).
    var hasRoom: Bool { (state.pointee.count + 1) * 4 <= size * 3 }

    /// Adds (or, when `index` has one, replaces) the cache of a registration; the table keeps it alive.
    /// Call with the container's lock held, when ``hasRoom``.
    func set(_ cache: AnyObject, for index: Int) {
        store(.passRetained(cache), registration: nil, creation: 0, for: index)
    }

    /// Adds (or replaces) `instance` (an ``InstanceBox`` when `isBox`), which this table's scope made for
    /// `registration` and keeps as it is, with its creation number, and publishes it (see ``CachedInstance``);
    /// the table keeps both alive. Call with the container's lock held, when ``hasRoom``.
    func keep(_ instance: AnyObject, isBox: Bool, of registration: AnyObject, creation: Int, for index: Int) {
        let position = store(.passRetained(instance), registration: .passRetained(registration), creation: creation, for: index)
        AtomicWord(words(at: position) + 1).publish(instance: instance, isBox: isBox)
    }

    /// Returns the entry's position.
    @discardableResult
    private func store(
        _ cache: Unmanaged<AnyObject>, registration: Unmanaged<AnyObject>?, creation: Int, for index: Int
    ) -> Int {
        let position = probe(UInt(index))
        let entry = entries + position
        Self.replaceReferences(of: entry, cache: cache, registration: registration, creation: creation)
        if entry.pointee.index == Self.empty {
            AtomicWord(words(at: position)).store(UInt(index))
            state.pointee.count += 1
        }
        return position
    }

    /// Drops the cache of `index`, which was never published (a creation that failed); the entry stays, so
    /// that probes go on past it. Call with the container's lock held.
    func clear(for index: Int) {
        let entry = entries + probe(UInt(index))
        guard entry.pointee.index == UInt(index) else { return }
        Self.replaceReferences(of: entry, cache: nil, registration: nil, creation: 0)
    }

    /// Puts the references (retained by the caller) and creation number in `entry`, and releases the ones it
    /// held, after: a release may run a deinit, which must find the entry consistent.
    private static func replaceReferences(
        of entry: UnsafeMutablePointer<Entry>, cache: Unmanaged<AnyObject>?, registration: Unmanaged<AnyObject>?,
        creation: Int
    ) {
        let old = (cache: entry.pointee.cache, registration: entry.pointee.registration)
        entry.pointee.cache = cache
        entry.pointee.registration = registration
        entry.pointee.creation = creation
        old.cache?.release()
        old.registration?.release()
    }

    /// Publishes the cached instance (see ``CachedInstance``) of the registration with `index`, which has an
    /// entry. Call with the lock held.
    func publish(_ box: AnyObject, for index: Int) {
        AtomicWord(words(at: probe(UInt(index))) + 1).publish(instance: box)
    }

    /// Unpublishes the instance of `index`, if it has an entry; the entry keeps it alive. Call with the lock
    /// held.
    func unpublish(for index: Int) {
        let position = probe(UInt(index))
        guard entries[position].index == UInt(index) else { return }
        AtomicWord(words(at: position) + 1).store(0)
    }

    /// The published instance's word (see ``CachedInstance``) of the registration with `index`, or 0. Call
    /// inside a read section.
    @inline(__always)
    func box(for index: Int) -> UInt {
        let index = UInt(index)
        let mask = size - 1
        var position = start(index)
        while true {
            let found = AtomicWord(words(at: position)).load()
            if found == index { return AtomicWord(words(at: position) + 1).load() }
            if found == Self.empty { return 0 }
            position = (position + 1) & mask
        }
    }
}

/// A ``ScopeTable``'s fields before its entries: `size`, which lock-free readers read, then the fields the
/// lock's holder writes (reached through their own pointer, see ``ScopeTable``'s `state`).
struct ScopeTableHeader {
    /// The number of entries, a power of two (the buffer's own `capacity` may be larger).
    let size: Int
    var state = ScopeTableState()

    /// Where `state` lies in the header: after `size`, at the next offset its alignment allows, as Swift lays
    /// out a struct's stored properties in order (``ScopeTable/make(capacity:)`` asserts it against the key
    /// path's offset). A constant: a `static let` would cost a `swift_once` call on every access.
    static var stateOffset: Int {
        let alignment = MemoryLayout<ScopeTableState>.alignment
        return (MemoryLayout<Int>.size + alignment - 1) / alignment * alignment
    }

    init(size: Int) {
        self.size = size
    }
}

/// What a ``ScopeTable`` keeps besides its entries. Written and read with the container's lock held.
struct ScopeTableState {
    var count = 0
    /// Whether this table owns the references in its entries (false once a larger copy took them over).
    var ownsCaches = true
    /// The smaller table this one replaced: lock-free readers may still be probing it.
    var replaced: ScopeTable?
}

/// One ``ScopeTable`` entry: `index` is `UInt.max` while empty.
struct ScopeTableEntry {
    var index: UInt
    var box: UInt
    var cache: Unmanaged<AnyObject>?
    /// When `cache` is an instance the table's scope made and keeps as it is, what a ``Slot`` would say of it
    /// (for the live report): its registration (retained) and creation number; else nil and 0.
    var registration: Unmanaged<AnyObject>?
    var creation: Int
}
