extension Resolving {
    // Factories as trailing closures after labelled options: `register(Foo.self, reuse: .singleton) { Foo() }`.
    // Without options, `register(Foo.self) { Foo() }` is the form of `Container+Registration.swift`.
    // Each form below requires its first option, so that no two forms accept the same call; the forms
    // whose factory takes the scope are preferred over the plain ones for a closure whose first
    // parameter is a `Scope`.

    /// Registers a factory, given as a trailing closure after `reuse:`.
    /// - Parameters:
    ///   - type: The service type.
    ///   - reuse: How instances are reused.
    ///   - key: A key that tells this registration apart from others of the same type and arguments.
    ///   - policy: What to do when the same service, arguments and key are registered.
    ///   - factory: Makes an instance from the runtime arguments; may throw.
    /// - Returns: The registration.
    /// - Throws: ``RegistrationError`` with `ifAlreadyRegistered: .throw` only.
    @discardableResult @_disfavoredOverload
    @inlinable
    public func register<Service, each Arg, Failure: Error>(
        _ type: Service.Type,
        reuse: Reuse,
        key: AnyHashable? = nil,
        ifAlreadyRegistered policy: DuplicatePolicy<Failure> = .skip,
        factory: @escaping @Sendable (repeat each Arg) throws -> Service
    ) throws(Failure) -> ServiceResolver<Service, (repeat each Arg)> {
        try register(type, factory, reuse: reuse, key: key, ifAlreadyRegistered: policy)
    }

    /// Registers a factory, given as a trailing closure after `key:`.
    /// - Parameters:
    ///   - type: The service type.
    ///   - key: A key that tells this registration apart from others of the same type and arguments.
    ///   - policy: What to do when the same service, arguments and key are registered.
    ///   - factory: Makes an instance from the runtime arguments; may throw.
    /// - Returns: The registration.
    /// - Throws: ``RegistrationError`` with `ifAlreadyRegistered: .throw` only.
    @discardableResult @_disfavoredOverload
    @inlinable
    public func register<Service, each Arg, Failure: Error>(
        _ type: Service.Type,
        key: AnyHashable?,
        ifAlreadyRegistered policy: DuplicatePolicy<Failure> = .skip,
        factory: @escaping @Sendable (repeat each Arg) throws -> Service
    ) throws(Failure) -> ServiceResolver<Service, (repeat each Arg)> {
        try register(type, factory, key: key, ifAlreadyRegistered: policy)
    }

    /// Registers a factory, given as a trailing closure after `ifAlreadyRegistered:`.
    /// - Parameters:
    ///   - type: The service type.
    ///   - policy: What to do when the same service, arguments and key are registered.
    ///   - factory: Makes an instance from the runtime arguments; may throw.
    /// - Returns: The registration.
    /// - Throws: ``RegistrationError`` with `ifAlreadyRegistered: .throw` only.
    @discardableResult @_disfavoredOverload
    @inlinable
    public func register<Service, each Arg, Failure: Error>(
        _ type: Service.Type,
        ifAlreadyRegistered policy: DuplicatePolicy<Failure>,
        factory: @escaping @Sendable (repeat each Arg) throws -> Service
    ) throws(Failure) -> ServiceResolver<Service, (repeat each Arg)> {
        try register(type, factory, ifAlreadyRegistered: policy)
    }

    /// Registers a factory that receives the resolving scope, given as a trailing closure after `reuse:`.
    ///
    /// ```swift
    /// container.register(Session.self, reuse: .inScope) { scope in Session(try scope.require(Database.self)) }
    /// ```
    /// - Parameters:
    ///   - type: The service type.
    ///   - reuse: How instances are reused.
    ///   - key: A key that tells this registration apart from others of the same type and arguments.
    ///   - policy: What to do when the same service, arguments and key are registered.
    ///   - factory: Makes an instance from the scope and the runtime arguments; may throw.
    /// - Returns: The registration.
    /// - Throws: ``RegistrationError`` with `ifAlreadyRegistered: .throw` only.
    @discardableResult
    @inlinable
    public func register<Service, each Arg, Failure: Error>(
        _ type: Service.Type,
        reuse: Reuse,
        key: AnyHashable? = nil,
        ifAlreadyRegistered policy: DuplicatePolicy<Failure> = .skip,
        factory: @escaping @Sendable (Scope, repeat each Arg) throws -> Service
    ) throws(Failure) -> ServiceResolver<Service, (repeat each Arg)> {
        try register(type, factory, reuse: reuse, key: key, ifAlreadyRegistered: policy)
    }

    /// Registers a factory that receives the resolving scope, given as a trailing closure after `key:`.
    /// - Parameters:
    ///   - type: The service type.
    ///   - key: A key that tells this registration apart from others of the same type and arguments.
    ///   - policy: What to do when the same service, arguments and key are registered.
    ///   - factory: Makes an instance from the scope and the runtime arguments; may throw.
    /// - Returns: The registration.
    /// - Throws: ``RegistrationError`` with `ifAlreadyRegistered: .throw` only.
    @discardableResult
    @inlinable
    public func register<Service, each Arg, Failure: Error>(
        _ type: Service.Type,
        key: AnyHashable?,
        ifAlreadyRegistered policy: DuplicatePolicy<Failure> = .skip,
        factory: @escaping @Sendable (Scope, repeat each Arg) throws -> Service
    ) throws(Failure) -> ServiceResolver<Service, (repeat each Arg)> {
        try register(type, factory, key: key, ifAlreadyRegistered: policy)
    }

    /// Registers a factory that receives the resolving scope, given as a trailing closure after
    /// `ifAlreadyRegistered:`.
    /// - Parameters:
    ///   - type: The service type.
    ///   - policy: What to do when the same service, arguments and key are registered.
    ///   - factory: Makes an instance from the scope and the runtime arguments; may throw.
    /// - Returns: The registration.
    /// - Throws: ``RegistrationError`` with `ifAlreadyRegistered: .throw` only.
    @discardableResult
    @inlinable
    public func register<Service, each Arg, Failure: Error>(
        _ type: Service.Type,
        ifAlreadyRegistered policy: DuplicatePolicy<Failure>,
        factory: @escaping @Sendable (Scope, repeat each Arg) throws -> Service
    ) throws(Failure) -> ServiceResolver<Service, (repeat each Arg)> {
        try register(type, factory, ifAlreadyRegistered: policy)
    }

    /// Registers a factory, given as a trailing closure after `key:` and then `reuse:` (the other order of
    /// the two labels).
    ///
    /// ```swift
    /// container.register(Logger.self, key: "http", reuse: .singleton) { Logger(label: "http") }
    /// ```
    /// - Parameters:
    ///   - type: The service type.
    ///   - key: A key that tells this registration apart from others of the same type and arguments.
    ///   - reuse: How instances are reused.
    ///   - policy: What to do when the same service, arguments and key are registered.
    ///   - factory: Makes an instance from the runtime arguments; may throw.
    /// - Returns: The registration.
    /// - Throws: ``RegistrationError`` with `ifAlreadyRegistered: .throw` only.
    @discardableResult @_disfavoredOverload
    @inlinable
    public func register<Service, each Arg, Failure: Error>(
        _ type: Service.Type,
        key: AnyHashable?,
        reuse: Reuse,
        ifAlreadyRegistered policy: DuplicatePolicy<Failure> = .skip,
        factory: @escaping @Sendable (repeat each Arg) throws -> Service
    ) throws(Failure) -> ServiceResolver<Service, (repeat each Arg)> {
        try register(type, factory, reuse: reuse, key: key, ifAlreadyRegistered: policy)
    }

    /// Registers a factory that receives the resolving scope, given as a trailing closure after `key:` and
    /// then `reuse:`.
    /// - Parameters:
    ///   - type: The service type.
    ///   - key: A key that tells this registration apart from others of the same type and arguments.
    ///   - reuse: How instances are reused.
    ///   - policy: What to do when the same service, arguments and key are registered.
    ///   - factory: Makes an instance from the scope and the runtime arguments; may throw.
    /// - Returns: The registration.
    /// - Throws: ``RegistrationError`` with `ifAlreadyRegistered: .throw` only.
    @discardableResult
    @inlinable
    public func register<Service, each Arg, Failure: Error>(
        _ type: Service.Type,
        key: AnyHashable?,
        reuse: Reuse,
        ifAlreadyRegistered policy: DuplicatePolicy<Failure> = .skip,
        factory: @escaping @Sendable (Scope, repeat each Arg) throws -> Service
    ) throws(Failure) -> ServiceResolver<Service, (repeat each Arg)> {
        try register(type, factory, reuse: reuse, key: key, ifAlreadyRegistered: policy)
    }
}
