/// Where one reused instance lives: nothing yet, being made by some thread, or made.
final class Slot<Service> {  // guarded by the container's lock
    enum State {
        case empty
        case creating(InFlight)
        /// Made and cached, its `resolved` callback still running: the creating thread gets it, others wait.
        case initializing(Service, InFlight)
        case created(Service)
    }

    var state: State = .empty
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
