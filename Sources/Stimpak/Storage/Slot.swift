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

    /// The flight to wait on for the creation under way, attached on first use. Call while the state is
    /// `.creating` or `.initializing`.
    func flight(of resolver: any Registration, _ locked: borrowing Locked) -> InFlight? {
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
    /// finishes once it has released the lock.
    func settle(_ state: State, _ locked: borrowing Locked) -> InFlight? {
        defer { flight = nil }
        self.state = state
        return flight
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

/// Arguments whose types are all `Hashable`, as one `Hashable` value.
struct HashableArguments<each Value: Hashable>: Hashable {
    let values: (repeat each Value)

    init(_ values: repeat each Value) {
        self.values = (repeat each values)
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        for (left, right) in repeat (each lhs.values, each rhs.values) {
            if left != right { return false }
        }
        return true
    }

    func hash(into hasher: inout Hasher) {
        for value in repeat each values {
            hasher.combine(value)
        }
    }
}
