/// The register forms, on the container and on every scope.
///
/// On the container (or its root scope), a registration is seen everywhere. On a child scope it belongs to
/// that scope: seen by it and the scopes below, shadowing the container's registration of the same service,
/// arguments and key, and gone when the scope is disposed (see ``Scope/add(reuse:key:policy:disposesInstances:dependencies:factory:)``).
extension Resolving {
    /// Registers a factory for `Service`, taking any number of runtime arguments.
    ///
    /// ```swift
    /// container.register(Foo.self, { () -> Foo in Foo() })
    /// container.register(Person.self, { (_ first: String, _ last: String) in Person(first, last) }, reuse: .inScope)
    /// ```
    /// - Parameters:
    ///   - type: The service type; resolve it with the same type.
    ///   - factory: Makes an instance from the runtime arguments; may throw.
    ///   - reuse: How instances are reused; nil (the default) for the container's default reuse, which is
    ///     `.transient` unless the container was made with `Container(defaultReuse:)`.
    ///   - key: A key that tells this registration apart from others of the same type and arguments.
    ///   - policy: What to do when the same service, arguments and key are registered: `.skip` (default),
    ///     `.replace`, or `.throw`.
    /// - Returns: The registration, to refine with `compareArgsBy`, `resolved` or `onDispose`. When it
    ///   was skipped, the returned registration is not in the container.
    /// - Throws: ``RegistrationError`` with `ifAlreadyRegistered: .throw` only.
    @discardableResult @_disfavoredOverload  // so that a closure taking a `Scope` first gets the scope
    @inlinable
    public func register<Service, each Arg, Failure: Error>(
        _ type: Service.Type,
        _ factory: @escaping @Sendable (repeat each Arg) throws -> Service,
        reuse: Reuse? = nil,
        key: AnyHashable? = nil,
        ifAlreadyRegistered policy: DuplicatePolicy<Failure> = .skip
    ) throws(Failure) -> ServiceResolver<Service, (repeat each Arg)> {
        try resolutionScope.add(reuse: reuse, key: key, policy: policy) { _, arguments in try factory(repeat each arguments) }
    }

    /// Registers a factory that receives the resolving scope, to resolve its dependencies from, and any
    /// number of runtime arguments.
    ///
    /// ```swift
    /// container.register(Session.self) { (scope: Scope) in Session(try scope.require(Database.self)) }
    /// container.register(Greeter.self, { (scope: Scope, name: String) in Greeter(name, try scope.require(Clock.self)) })
    /// ```
    /// The scope is the one whose cache receives the instance: the root scope for a singleton, the
    /// resolving scope otherwise. Resolve dependencies with `require`, so that a failure says why.
    /// - Parameters:
    ///   - type: The service type.
    ///   - factory: Makes an instance from the scope and the runtime arguments; may throw.
    ///   - reuse: How instances are reused; nil (the default) for the container's default reuse, which is
    ///     `.transient` unless the container was made with `Container(defaultReuse:)`.
    ///   - key: A key that tells this registration apart from others of the same type and arguments.
    ///   - policy: What to do when the same service, arguments and key are registered.
    /// - Returns: The registration.
    /// - Throws: ``RegistrationError`` with `ifAlreadyRegistered: .throw` only.
    @discardableResult
    @inlinable
    public func register<Service, each Arg, Failure: Error>(
        _ type: Service.Type,
        _ factory: @escaping @Sendable (Scope, repeat each Arg) throws -> Service,
        reuse: Reuse? = nil,
        key: AnyHashable? = nil,
        ifAlreadyRegistered policy: DuplicatePolicy<Failure> = .skip
    ) throws(Failure) -> ServiceResolver<Service, (repeat each Arg)> {
        try resolutionScope.add(reuse: reuse, key: key, policy: policy) { scope, arguments in try factory(scope, repeat each arguments) }
    }

    /// Registers an ``Instantiable`` service, made with `init()`.
    ///
    /// ```swift
    /// container.register(Clock.self, reuse: .singleton)
    /// ```
    /// - Parameters:
    ///   - type: The service type.
    ///   - reuse: How instances are reused; nil (the default) for the container's default reuse, which is
    ///     `.transient` unless the container was made with `Container(defaultReuse:)`.
    ///   - key: A key that tells this registration apart from others of the same type.
    ///   - policy: What to do when the same service and key are registered.
    /// - Returns: The registration.
    /// - Throws: ``RegistrationError`` with `ifAlreadyRegistered: .throw` only.
    @discardableResult
    @inlinable
    public func register<Service: Instantiable, Failure: Error>(
        _ type: Service.Type,
        reuse: Reuse? = nil,
        key: AnyHashable? = nil,
        ifAlreadyRegistered policy: DuplicatePolicy<Failure> = .skip
    ) throws(Failure) -> ServiceResolver<Service, Void> {
        try resolutionScope.add(reuse: reuse, key: key, policy: policy) { _, _ in Service() }
    }

    /// Registers an existing value as the service: every resolve returns it (Kraken's `implementation:`).
    ///
    /// ```swift
    /// container.register(Configuration.self, instance: Configuration(environment: .production))
    /// container.register(Clock.self, instance: FixedClock(date), key: "tests")
    /// ```
    /// The container did not make it, so by default it does not dispose it either; pass
    /// `disposedWithContainer: true` to hand it over (a `Disposable` instance is then disposed with the
    /// container, like a singleton). An `onDispose` callback set on the registration always runs.
    /// - Parameters:
    ///   - type: The service type; defaults to the instance's static type.
    ///   - instance: The value every resolve returns.
    ///   - key: A key that tells this registration apart from others of the same type.
    ///   - disposedWithContainer: Whether the container disposes a `Disposable` instance; false by default.
    ///   - policy: What to do when the same service and key are registered.
    /// - Returns: The registration.
    /// - Throws: ``RegistrationError`` with `ifAlreadyRegistered: .throw` only.
    @discardableResult
    @inlinable
    public func register<Service: Sendable, Failure: Error>(
        _ type: Service.Type = Service.self,
        instance: Service,
        key: AnyHashable? = nil,
        disposedWithContainer: Bool = false,
        ifAlreadyRegistered policy: DuplicatePolicy<Failure> = .skip
    ) throws(Failure) -> ServiceResolver<Service, Void> {
        try resolutionScope.add(reuse: .singleton, key: key, policy: policy, disposesInstances: disposedWithContainer) { _, _ in instance }
    }

    /// Removes the registration of `Service` without arguments under `key`: from the container, or from
    /// this scope's own registrations.
    ///
    /// Instances it already cached stay in their caches until those are disposed.
    /// - Parameters:
    ///   - type: The service type.
    ///   - key: The registration key, or nil.
    /// - Returns: Whether there was such a registration.
    @discardableResult
    public func unregister<Service>(_ type: Service.Type, key: AnyHashable? = nil) -> Bool {
        resolutionScope.unregister(ServiceKey(service: Service.self, key: key))
    }

    /// Removes the registration of `Service` with arguments of type `Args` under `key`.
    /// - Parameters:
    ///   - type: The service type.
    ///   - arguments: The arguments' type: `String.self` for one, `(String, Int).self` for several.
    ///   - key: The registration key, or nil.
    /// - Returns: Whether there was such a registration.
    @discardableResult
    public func unregister<Service, Args>(_ type: Service.Type, arguments: Args.Type, key: AnyHashable? = nil) -> Bool {
        resolutionScope.unregister(ServiceKey(service: Service.self, arguments: Args.self, key: key))
    }

    /// Whether `Service` is registered without arguments under `key`, where this scope sees it: in the
    /// container, or in this scope or one above it.
    /// - Parameters:
    ///   - type: The service type.
    ///   - key: The registration key, or nil.
    /// - Returns: True when a registration exists.
    public func isRegistered<Service>(_ type: Service.Type, key: AnyHashable? = nil) -> Bool {
        resolutionScope.isRegistered(ServiceKey(service: Service.self, key: key))
    }

    /// Whether `Service` is registered with arguments of type `Args` under `key`, where this scope sees it.
    /// - Parameters:
    ///   - type: The service type.
    ///   - arguments: The arguments' type.
    ///   - key: The registration key, or nil.
    /// - Returns: True when a registration exists.
    public func isRegistered<Service, Args>(_ type: Service.Type, arguments: Args.Type, key: AnyHashable? = nil) -> Bool {
        resolutionScope.isRegistered(ServiceKey(service: Service.self, arguments: Args.self, key: key))
    }
}

extension Container {
    /// Every registration's service type, arguments type and key (the container's, not its scopes').
    public var registrations: [ServiceKey] {
        registry.lock.withLock { _ in registry.entries.values.compactMap { $0.registration?.serviceKey } }
    }
}
