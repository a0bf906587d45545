/// Binding a provider to its registration (see ``ProviderBinding``).
extension Scope {
    /// What a call of a provider of (`Service`, `Args`, `key`) made in this scope binds to: the registration,
    /// or nothing when a lock-free resolve would not serve it (nothing registered, a `provide`d value or a scope's registration
    /// for the key, a `.weak`, `.graph` or async registration, callbacks or decorators, an observer, a scoped
    /// service in the root, whose captive check runs on each resolve): then each call resolves as `require` does.
    ///
    /// Under the container's lock: the published table, the registration and its route are read as one state,
    /// which no writer changes until the lock is released.
    func providerBinding<Service, Args>(
        _ type: Service.Type, _ arguments: Args.Type, key: AnyHashable?
    ) -> ProviderBinding<Service, Args> {
        ProviderBinding(scope: self, key: key, tableWord: registry.tableWord, bound: bound(Service.self, Args.self, key: key))
    }

    private func bound<Service, Args>(
        _ type: Service.Type, _ arguments: Args.Type, key: AnyHashable?
    ) -> (table: LookupTable, resolver: ServiceResolver<Service, Args>, route: LookupTable.Route)? {
        let requested = ServiceKey(service: Service.self, arguments: Args.self, key: key)
        // Interned before the lock: its `==` is user code.
        guard let interned = registry.intern(requested, adding: false) else { return nil }
        return registry.lock.withLock { locked -> (LookupTable, ServiceResolver<Service, Args>, LookupTable.Route)? in
            guard !isDisposedValue, !root.isDisposedValue, registry.observedWord.loadRelaxed() == 0,
                let entry = registry.entries[interned], !entry.hasScopeLocals, let registration = entry.registration
            else { return nil }
            registry.publishTableIfNeeded(locked)
            // Published under this lock, which every writer that retires it holds: alive while it is held.
            guard let table = registry.tableWord.withPublished(LookupTable.self, { $0 }) else { return nil }
            let route: LookupTable.Route
            switch registration.route(locked) {
            case .transient?: route = .transient
            case .root?: route = .root
            case .scoped? where parent != nil: route = .scoped
            default: return nil
            }
            // The registry key holds the identities of `Service` and `Args`, so this is the registration's type.
            return (table, unsafeDowncast(registration, to: ServiceResolver<Service, Args>.self), route)
        }
    }
}
