import CStimpakAtomics

/// Where one reused instance lives: nothing yet, being made by some thread, or made.
final class Slot<Service> {  // guarded by the container's lock
    enum State {
        case empty
        case creating(InFlight)
        /// Made and cached, its `resolved` callback still running: the creating thread gets it, others wait.
        case initializing(Service, InFlight)
        /// Made; the box is what the lock-free path publishes.
        case created(InstanceBox<Service>)
    }

    var state: State = .empty
}

/// A cached instance, boxed so that the lock-free path can publish it as one word whatever `Service` is.
@usableFromInline
final class InstanceBox<Service> {
    @usableFromInline let value: Service

    init(_ value: Service) {
        self.value = value
    }

    /// The word that publishes the box. The box's owner (a ``Slot``) keeps it alive.
    var word: UInt { UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque()) }
}

/// The `.inScope` instances one child scope has published for the lock-free path: (registration index,
/// unretained `InstanceBox`) pairs, appended under the container's lock and read in read sections.
///
/// Entries are written before `count` is raised, and never change until the scope is disposed; when the
/// storage is full, the scope publishes a larger copy and keeps the old one until it is disposed.
final class ScopeSlots {
    let capacity: Int
    private let count: UnsafeMutablePointer<UInt>
    private let indices: UnsafeMutablePointer<Int>
    private let boxes: UnsafeMutablePointer<UInt>

    init(capacity: Int, copying old: ScopeSlots?) {
        self.capacity = capacity
        count = .allocate(capacity: 1)
        indices = .allocate(capacity: capacity)
        boxes = .allocate(capacity: capacity)
        let copied = old.map { Int($0.count.pointee) } ?? 0
        if let old {
            indices.initialize(from: old.indices, count: copied)
            boxes.initialize(from: old.boxes, count: copied)
        }
        count.initialize(to: UInt(copied))
    }

    deinit {
        count.deallocate()
        indices.deallocate()
        boxes.deallocate()
    }

    /// Adds a published instance; false when full. Call with the container's lock held.
    func append(index: Int, box: UInt) -> Bool {
        let used = Int(count.pointee)
        guard used < capacity else { return false }
        indices[used] = index
        boxes[used] = box
        stimpak_store(count, UInt(used + 1))
        return true
    }

    /// The published box of the registration with `index`, or 0. Call inside a read section.
    func box(for index: Int) -> UInt {
        let used = Int(stimpak_load(count))
        for position in 0..<used where indices[position] == index {
            return boxes[position]
        }
        return 0
    }
}

/// One registration's instances in one scope: a single slot when arguments are ignored, else one slot
/// per class of equal arguments (a list searched with the comparator, or a hash table).
final class InstanceCache<Service, Args> {  // guarded by the container's lock
    let single = Slot<Service>()
    /// Append-only, so a search that ran outside the lock only needs to look at what was added since.
    var compared: [(arguments: Args, slot: Slot<Service>)] = []
    var hashed: [AnyHashable: Slot<Service>] = [:]
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
    /// The slot the instance was cached in, to find the record again if the instance is evicted.
    let slot: AnyObject
    let dispose: () throws -> Void
}
