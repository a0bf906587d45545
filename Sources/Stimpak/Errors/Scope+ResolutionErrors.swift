extension ResolutionError {
    /// The error for `requested`, met while the services of `outer` are being made (outermost first): the one
    /// place a resolution path is put together. Its path is `outer`, then `requested`; empty for a resolve made
    /// outside every factory.
    static func met(
        _ code: Code, _ requested: ServiceKey, inside outer: [ServiceKey], underlyingError: (any Error)? = nil,
        scopeKey: AnyHashable? = nil
    ) -> ResolutionError {
        ResolutionError(
            code, requested: requested, path: outer.isEmpty ? [] : outer + [requested], underlyingError: underlyingError,
            scopeKey: scopeKey)
    }

    /// The services being made around a resolve here: the async factories this task is running (if any), then
    /// this thread's synchronous ones, outermost first.
    static var currentPath: [ServiceKey] {
        let node = AsyncNode.current
        let context = ResolutionContext.current
        // A main-actor factory that an `await` runs has its registration on both (see `runningMainActorFactory`).
        let threadKeys = context.pathKeys
        if let node, context.outermostRegistration === node.registration { return node.pathKeys + threadKeys.dropFirst() }
        return (node?.pathKeys ?? []) + threadKeys
    }
}

/// The errors of the resolve path, built only where one is thrown.
extension Scope {
    /// An error for `requested`, carrying this thread's and task's resolution path when it happens inside a
    /// factory.
    func failure(_ code: ResolutionError.Code, _ requested: ServiceKey, scopeKey: AnyHashable? = nil) -> ResolutionError {
        .met(code, requested, inside: ResolutionError.currentPath, scopeKey: scopeKey)
    }

    /// The error a factory threw, as a ``ResolutionError`` (a dependency's own failure passes through).
    @usableFromInline
    func factoryFailure(_ error: any Error, of key: ServiceKey, context: ResolutionContext) -> ResolutionError {
        if let error = error as? ResolutionError { return error }
        return ResolutionError(.factoryFailed, requested: key, path: context.pathKeys, underlyingError: error)
    }

    /// The `captiveDependency` error for `resolver`, resolved while `captor` is being made.
    func captiveDependency<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, captor: any Registration
    ) -> ResolutionError {
        var error = failure(.captiveDependency, resolver.serviceKey)
        error.reuse = resolver.reuse
        error.captor = captor.serviceKey
        error.captorReuse = captor.reuse
        return error
    }

    /// The error for a synchronous resolve of a registration whose factory is `async`. Resolved at the top
    /// (not from inside a synchronous factory), the `async` resolve that caught it goes on to await it.
    func requiresAwait<Service, Args>(_ resolver: ServiceResolver<Service, Args>) -> ResolutionError {
        var error = failure(.requiresAwait, resolver.serviceKey)
        error.isAwaitableHere = ResolutionContext.current.depth == 0
        error.isMainActor = resolver.isMainActor
        return error
    }

    /// The same, for the empty slot at `place`, found while the registrations' generation was `generation`: the
    /// `await` resolve whose synchronous attempt this is (``ResolutionContext/servesAwait``) goes on from that
    /// slot (``AwaitablePlace``) rather than looking the registration, its owner and its slot up again.
    func requiresAwait<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, at place: CachePlace, generation: Int
    ) -> ResolutionError {
        guard ResolutionContext.servesAwait else { return requiresAwait(resolver) }
        return ResolutionContext.current.handOver(
            AwaitablePlace(
                registration: resolver, types: (ObjectIdentifier(Service.self), ObjectIdentifier(Args.self)),
                place: place, generation: generation),
            of: resolver)
    }

    /// The error for a `.scopedTo` registration resolved where no scope matches, naming the scopes searched.
    func noMatchingScope<Service, Args>(
        for resolver: ServiceResolver<Service, Args>, upTo last: Scope?
    ) -> ResolutionError {
        var error = failure(.noMatchingScope, resolver.serviceKey)
        error.reuse = resolver.reuse
        var searched: [AnyHashable?] = []
        var scope: Scope? = self
        while let current = scope {
            searched.append(current.key)
            scope = current === last ? nil : current.parent
        }
        error.searchedScopeKeys = searched
        return error
    }
}
