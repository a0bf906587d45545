/// Registrations whose factory is isolated to the main actor: view models and other main-actor types,
/// including every type of a target built with `.defaultIsolation(MainActor.self)`.
extension Resolving {
    /// Registers a factory that runs on the main actor, taking any number of runtime arguments.
    ///
    /// ```swift
    /// // In main-actor code (a view, an app built with .defaultIsolation(MainActor.self)):
    /// container.register(SettingsModel.self, reuse: .inScope, onMainActor: { SettingsModel() })
    /// let model = try screen.require(SettingsModel.self)            // on the main actor: synchronous
    /// let model = try await screen.require(SettingsModel.self)      // elsewhere: hops to the main actor
    /// ```
    /// The closure is main-actor isolated, so it may call main-actor initializers. On the main thread a
    /// synchronous resolve runs it at once; on any other thread a synchronous resolve of an instance not made
    /// yet fails with ``ResolutionError/Code/requiresAwait``, and `try await require` runs it on the main
    /// actor. A made instance (reused) resolves from anywhere, lock-free, like any other.
    /// - Parameters:
    ///   - type: The service type.
    ///   - reuse: How instances are reused; nil for the container's default.
    ///   - key: A key that tells this registration apart from others of the same type and arguments.
    ///   - policy: What to do when the same service, arguments and key are registered.
    ///   - factory: Makes an instance on the main actor from the runtime arguments; may throw.
    /// - Returns: The registration.
    /// - Throws: ``RegistrationError`` with `ifAlreadyRegistered: .throw` only.
    @discardableResult @_disfavoredOverload  // so that a closure taking a `Scope` first gets the scope
    public func register<Service, each Arg, Failure: Error>(
        _ type: Service.Type,
        reuse: Reuse? = nil,
        key: AnyHashable? = nil,
        ifAlreadyRegistered policy: DuplicatePolicy<Failure> = .skip,
        onMainActor factory: @escaping @MainActor @Sendable (repeat each Arg) throws -> Service
    ) throws(Failure) -> ServiceResolver<Service, (repeat each Arg)> {
        try registerOnMainActor(reuse: reuse, key: key, policy: policy) { (_: Scope, arguments: (repeat each Arg)) in
            try factory(repeat each arguments)
        }
    }

    /// Registers a factory that runs on the main actor and receives the resolving scope, to resolve its
    /// dependencies from, and any number of runtime arguments.
    ///
    /// ```swift
    /// container.register(CartModel.self, reuse: .inScope, onMainActor: { (scope: Scope) in
    ///     CartModel(store: try scope.require(CartStore.self))
    /// })
    /// ```
    /// - Parameters:
    ///   - type: The service type.
    ///   - reuse: How instances are reused; nil for the container's default.
    ///   - key: A key that tells this registration apart from others of the same type and arguments.
    ///   - policy: What to do when the same service, arguments and key are registered.
    ///   - factory: Makes an instance on the main actor from the scope and the runtime arguments; may throw.
    /// - Returns: The registration.
    /// - Throws: ``RegistrationError`` with `ifAlreadyRegistered: .throw` only.
    @discardableResult
    public func register<Service, each Arg, Failure: Error>(
        _ type: Service.Type,
        reuse: Reuse? = nil,
        key: AnyHashable? = nil,
        ifAlreadyRegistered policy: DuplicatePolicy<Failure> = .skip,
        onMainActor factory: @escaping @MainActor @Sendable (Scope, repeat each Arg) throws -> Service
    ) throws(Failure) -> ServiceResolver<Service, (repeat each Arg)> {
        try registerOnMainActor(reuse: reuse, key: key, policy: policy) { (scope: Scope, arguments: (repeat each Arg)) in
            try factory(scope, repeat each arguments)
        }
    }

    /// The registration of a main-actor factory: synchronously on the main thread (asserting the isolation),
    /// and by hopping to the main actor from async code elsewhere.
    private func registerOnMainActor<Service, Args, Failure: Error>(
        reuse: Reuse?, key: AnyHashable?, policy: DuplicatePolicy<Failure>,
        _ factory: @escaping @MainActor @Sendable (Scope, Args) throws -> Service
    ) throws(Failure) -> ServiceResolver<Service, Args> {
        try resolutionScope.add(
            reuse: reuse, key: key, policy: policy,
            factory: { scope, arguments in
                // Only called on the main thread (see `ServiceResolver.requiresAwaitHere`).
                let arguments = UncheckedSendable(arguments)
                return try MainActor.assumeIsolated { UncheckedSendable(try factory(scope, arguments.value)) }.value
            },
            asyncFactory: { scope, arguments in
                // The arguments and the instance cross to and from the main actor, as they do in a synchronous
                // resolve from the main thread; the caller hands them over.
                let arguments = UncheckedSendable(arguments)
                return try await MainActor.run {
                    UncheckedSendable(try ResolutionContext.runningMainActorFactory(for: scope) { try factory(scope, arguments.value) })
                }.value
            },
            isMainActor: true)
    }
}
