/// Registrations whose factory is `async`: resolved with `try await scope.require(…)`.
extension Resolving {
    /// Registers an `async` factory for `Service`, taking any number of runtime arguments.
    ///
    /// ```swift
    /// container.register(Database.self, reuse: .singleton) { try await Database.connect() }
    /// container.register(Avatar.self) { (url: URL) async throws in try await Avatar.download(url) }
    /// let database = try await container.require(Database.self)
    /// ```
    /// Every option of the synchronous forms applies. A reused instance is made once: tasks that want it
    /// while it is being made suspend until it is (no thread blocks), a waiting task that is cancelled stops
    /// waiting, and a creation that throws lets the next resolve try again. A synchronous resolve fails with
    /// ``ResolutionError/Code/requiresAwait`` (once made and cached, the instance also resolves synchronously).
    /// - Parameters:
    ///   - type: The service type.
    ///   - reuse: How instances are reused; nil for the container's default.
    ///   - key: A key that tells this registration apart from others of the same type and arguments.
    ///   - policy: What to do when the same service, arguments and key are registered.
    ///   - factory: Makes an instance from the runtime arguments; may suspend and throw.
    /// - Returns: The registration.
    /// - Throws: ``RegistrationError`` with `ifAlreadyRegistered: .throw` only.
    @discardableResult @_disfavoredOverload  // so that a closure taking a `Scope` first gets the scope
    @inlinable
    public func register<Service, each Arg, Failure: Error>(
        _ type: Service.Type,
        reuse: Reuse? = nil,
        key: AnyHashable? = nil,
        ifAlreadyRegistered policy: DuplicatePolicy<Failure> = .skip,
        _ factory: @escaping @Sendable (repeat each Arg) async throws -> Service
    ) throws(Failure) -> ServiceResolver<Service, (repeat each Arg)> {
        try resolutionScope.add(
            reuse: reuse, key: key, policy: policy, factory: Self.awaitOnly,
            asyncFactory: { _, arguments in try await factory(repeat each arguments) })
    }

    /// Registers an `async` factory that receives the resolving scope, to resolve its dependencies from (with
    /// `try await scope.require(…)`), and any number of runtime arguments.
    ///
    /// ```swift
    /// container.register(Feed.self, reuse: .inScope) { (scope: Scope) async throws in
    ///     try await Feed(api: scope.require(Api.self), user: scope.require(User.self))
    /// }
    /// ```
    /// - Parameters:
    ///   - type: The service type.
    ///   - reuse: How instances are reused; nil for the container's default.
    ///   - key: A key that tells this registration apart from others of the same type and arguments.
    ///   - policy: What to do when the same service, arguments and key are registered.
    ///   - factory: Makes an instance from the scope and the runtime arguments; may suspend and throw.
    /// - Returns: The registration.
    /// - Throws: ``RegistrationError`` with `ifAlreadyRegistered: .throw` only.
    @discardableResult
    @inlinable
    public func register<Service, each Arg, Failure: Error>(
        _ type: Service.Type,
        reuse: Reuse? = nil,
        key: AnyHashable? = nil,
        ifAlreadyRegistered policy: DuplicatePolicy<Failure> = .skip,
        _ factory: @escaping @Sendable (Scope, repeat each Arg) async throws -> Service
    ) throws(Failure) -> ServiceResolver<Service, (repeat each Arg)> {
        try resolutionScope.add(
            reuse: reuse, key: key, policy: policy, factory: Self.awaitOnly,
            asyncFactory: { scope, arguments in try await factory(scope, repeat each arguments) })
    }

    /// Registers an `async` factory with `key:` before `reuse:` (the other order of the two labels).
    /// - Parameters:
    ///   - type: The service type.
    ///   - key: A key that tells this registration apart from others of the same type and arguments.
    ///   - reuse: How instances are reused.
    ///   - policy: What to do when the same service, arguments and key are registered.
    ///   - factory: Makes an instance from the runtime arguments; may suspend and throw.
    /// - Returns: The registration.
    /// - Throws: ``RegistrationError`` with `ifAlreadyRegistered: .throw` only.
    @discardableResult @_disfavoredOverload
    @inlinable
    public func register<Service, each Arg, Failure: Error>(
        _ type: Service.Type,
        key: AnyHashable?,
        reuse: Reuse,
        ifAlreadyRegistered policy: DuplicatePolicy<Failure> = .skip,
        _ factory: @escaping @Sendable (repeat each Arg) async throws -> Service
    ) throws(Failure) -> ServiceResolver<Service, (repeat each Arg)> {
        try register(type, reuse: reuse, key: key, ifAlreadyRegistered: policy, factory)
    }

    /// Registers an `async` factory that receives the scope, with `key:` before `reuse:`.
    /// - Parameters:
    ///   - type: The service type.
    ///   - key: A key that tells this registration apart from others of the same type and arguments.
    ///   - reuse: How instances are reused.
    ///   - policy: What to do when the same service, arguments and key are registered.
    ///   - factory: Makes an instance from the scope and the runtime arguments; may suspend and throw.
    /// - Returns: The registration.
    /// - Throws: ``RegistrationError`` with `ifAlreadyRegistered: .throw` only.
    @discardableResult
    @inlinable
    public func register<Service, each Arg, Failure: Error>(
        _ type: Service.Type,
        key: AnyHashable?,
        reuse: Reuse,
        ifAlreadyRegistered policy: DuplicatePolicy<Failure> = .skip,
        _ factory: @escaping @Sendable (Scope, repeat each Arg) async throws -> Service
    ) throws(Failure) -> ServiceResolver<Service, (repeat each Arg)> {
        try register(type, reuse: reuse, key: key, ifAlreadyRegistered: policy, factory)
    }

    /// The synchronous factory of an async registration: never called (the synchronous path throws
    /// ``ResolutionError/Code/requiresAwait`` before it would be).
    @usableFromInline
    static func awaitOnly<Service, Args>(_ scope: Scope, _ arguments: Args) throws -> Service {
        throw ResolutionError(.requiresAwait, requested: ServiceKey(service: Service.self, arguments: Args.self))
    }
}
