/// What every registration offers once its service and argument types are erased.
protocol Registration: AnyObject, Sendable {
    var serviceKey: ServiceKey { get }
    var reuse: Reuse { get }
    /// Detaches the instances the root scope caches for it, for the caller to release outside the lock.
    /// Call with the registry's lock held.
    func takeRootCache() -> AnyObject?
}

/// The container's registrations, and the lock that guards them and every scope's state.
///
/// One lock per container: a resolve takes it once to find its registration and, for a reused service,
/// its cached instance, and never holds it while a factory, callback or comparator runs.
final class Registry: @unchecked Sendable {  // `entries` and `nextIndex` are guarded by `lock`
    struct Entry {
        var registration: (any Registration)?
        /// Some scope has been given a value for this key with `provide`, so scopes are searched first.
        var hasScopeLocals = false
    }

    let lock = Lock()
    var entries: [ServiceKey: Entry] = [:]
    /// Each registration's index names its cache in every scope; never reused, so a cache can't outlive
    /// its registration and be mistaken for another's.
    private var nextIndex = 0

    /// Call with `lock` held.
    func makeIndex() -> Int {
        defer { nextIndex += 1 }
        return nextIndex
    }

    /// What is registered for the same service type under other keys or argument types. Call with `lock` held.
    func alternatives(to key: ServiceKey) -> [ServiceKey] {
        entries.compactMap { entry in
            guard let registration = entry.value.registration,
                  ObjectIdentifier(registration.serviceKey.service) == ObjectIdentifier(key.service)
            else { return nil }
            return registration.serviceKey
        }
        .sorted { $0.description < $1.description }
    }
}
