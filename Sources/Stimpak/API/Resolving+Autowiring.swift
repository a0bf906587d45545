extension Resolving {
    /// Registers `Service` made by `initializer`, each of whose parameters is resolved from the resolving
    /// scope (Kraken's autowiring, DryIoc's `Made.Of`).
    ///
    /// ```swift
    /// container.autowire(ServiceE.self, ServiceEImpl.init)   // init(a: ServiceA, b: ServiceB, c: ServiceC?)
    /// container.autowire(Greeter.self, reuse: .singleton) { (clock: Clock, log: Logger) in Greeter(clock, log) }
    /// ```
    /// Every parameter is a dependency, never a runtime argument: `register` is for factories that take
    /// runtime arguments (or the scope), `autowire` for initializers whose parameters the container supplies,
    /// so a call says which it is. A missing dependency fails with the path (`ServiceE → ServiceB`) as if
    /// resolved by hand; an `Optional` parameter gets nil when its type is not registered. The registration
    /// keeps its dependency types (``ServiceRegistration/dependencies``), so it can be checked without being made.
    /// - Parameters:
    ///   - type: The service type.
    ///   - reuse: How instances are reused; nil for the container's default.
    ///   - key: A key that tells this registration apart from others of the same type.
    ///   - policy: What to do when the same service and key are registered.
    ///   - initializer: Makes the service from its dependencies: an initializer or a closure.
    /// - Returns: The registration.
    /// - Throws: ``RegistrationError`` with `ifAlreadyRegistered: .throw` only.
    @discardableResult
    @inlinable
    public func autowire<Service, each Parameter, Failure: Error>(
        _ type: Service.Type,
        reuse: Reuse? = nil,
        key: AnyHashable? = nil,
        ifAlreadyRegistered policy: DuplicatePolicy<Failure> = .skip,
        _ initializer: @escaping @Sendable (repeat each Parameter) throws -> Service
    ) throws(Failure) -> ServiceResolver<Service, Void> {
        // How each parameter is resolved is decided once, here, not on every resolve.
        let parameters = (repeat Autowiring.parameter((each Parameter).self))
        var dependencies: [Dependency] = []
        for parameter in repeat each parameters { dependencies.append(parameter.dependency) }
        return try resolutionScope.add(reuse: reuse, key: key, policy: policy, dependencies: dependencies) { (scope: Scope, _: Void) in
            try initializer(repeat try (each parameters).resolve(scope))
        }
    }

    /// Registers `Service` made by the `async` `initializer`, each of whose parameters is resolved from the
    /// resolving scope with `await`, so that a parameter whose factory is `async` is made too.
    ///
    /// ```swift
    /// container.autowire(Session.self, reuse: .inScope, Session.init)   // init(pool: Pool, user: User) async throws
    /// let session = try await request.require(Session.self)
    /// ```
    /// The same rules as the synchronous form (every parameter a dependency, an `Optional` one nil when its
    /// type is not registered, the dependency types kept for validation); like every `async` registration, a
    /// synchronous resolve fails with ``ResolutionError/Code/requiresAwait`` until the instance is cached.
    /// - Parameters:
    ///   - type: The service type.
    ///   - reuse: How instances are reused; nil for the container's default.
    ///   - key: A key that tells this registration apart from others of the same type.
    ///   - policy: What to do when the same service and key are registered.
    ///   - initializer: Makes the service from its dependencies: an `async` initializer or closure.
    /// - Returns: The registration.
    /// - Throws: ``RegistrationError`` with `ifAlreadyRegistered: .throw` only.
    @discardableResult
    @inlinable
    public func autowire<Service, each Parameter, Failure: Error>(
        _ type: Service.Type,
        reuse: Reuse? = nil,
        key: AnyHashable? = nil,
        ifAlreadyRegistered policy: DuplicatePolicy<Failure> = .skip,
        _ initializer: @escaping @Sendable (repeat each Parameter) async throws -> Service
    ) throws(Failure) -> ServiceResolver<Service, Void> {
        let parameters = (repeat Autowiring.parameter((each Parameter).self))
        var dependencies: [Dependency] = []
        for parameter in repeat each parameters { dependencies.append(parameter.dependency) }
        return try resolutionScope.add(
            reuse: reuse, key: key, policy: policy, dependencies: dependencies, factory: Self.awaitOnly,
            asyncFactory: { (scope: Scope, _: Void) in
                try await initializer(repeat try await (each parameters).resolveAsync(scope))
            })
    }

    /// Registers `Service` made by `Implementation()`: a protocol with the concrete type that implements it
    /// (Kraken's `implementationType:`).
    ///
    /// ```swift
    /// container.register(Clock.self, implementation: SystemClock.self, reuse: .singleton)
    /// ```
    /// When `Implementation` is not a `Service`, resolving fails with ``ResolutionError/Code/factoryFailed``,
    /// naming both types. For an implementation whose initializer takes dependencies, use
    /// `autowire(_:reuse:key:ifAlreadyRegistered:_:)` with `Implementation.init`.
    /// - Parameters:
    ///   - type: The service type, usually a protocol.
    ///   - implementation: The concrete type, made with `init()`.
    ///   - reuse: How instances are reused; nil for the container's default.
    ///   - key: A key that tells this registration apart from others of the same type.
    ///   - policy: What to do when the same service and key are registered.
    /// - Returns: The registration.
    /// - Throws: ``RegistrationError`` with `ifAlreadyRegistered: .throw` only.
    @discardableResult
    public func register<Service, Implementation: Instantiable, Failure: Error>(
        _ type: Service.Type,
        implementation: Implementation.Type,
        reuse: Reuse? = nil,
        key: AnyHashable? = nil,
        ifAlreadyRegistered policy: DuplicatePolicy<Failure> = .skip
    ) throws(Failure) -> ServiceResolver<Service, Void> {
        try resolutionScope.add(reuse: reuse, key: key, policy: policy) { (_: Scope, _: Void) throws -> Service in
            guard let service = Implementation() as? Service else {
                throw NotAnImplementation(implementation: Implementation.self, service: Service.self)
            }
            return service
        }
    }
}

/// How an autowired initializer's parameter of type `Value` is resolved.
@usableFromInline
struct AutowiredParameter<Value>: Sendable {
    /// The dependency: the parameter's type, or the type an `Optional` or a wrapper wraps, and how it is needed.
    @usableFromInline let dependency: Dependency
    @usableFromInline let resolve: @Sendable (Scope) throws(ResolutionError) -> Value
    /// The same with `await`, for an `async` initializer: an `async` factory's instance is made too.
    @usableFromInline let resolveAsync: @Sendable (Scope) async throws -> Value

    @usableFromInline
    init(
        dependency: Dependency, resolve: @escaping @Sendable (Scope) throws(ResolutionError) -> Value,
        resolveAsync: @escaping @Sendable (Scope) async throws -> Value
    ) {
        self.dependency = dependency
        self.resolve = resolve
        self.resolveAsync = resolveAsync
    }
}

@usableFromInline
enum Autowiring {
    /// The resolution of a parameter of type `Value`: `require`, or for a type with its own rule (an
    /// `Optional`) that rule.
    @inlinable
    static func parameter<Value>(_ type: Value.Type) -> AutowiredParameter<Value> {
        if let special = Value.self as? any Autowirable.Type {
            return special.autowiredParameter(Value.self)
        }
        return AutowiredParameter(
            dependency: Dependency.of(Value.self),
            resolve: { scope throws(ResolutionError) in try scope.resolveInstance(Value.self, ()) },
            resolveAsync: { scope in try await scope.resolveInstanceAsync(Value.self, ()) })
    }
}

/// A service that a registration's factory resolves, as validation and the dependency graph see it.
@usableFromInline
struct Dependency: Sendable, Hashable {
    /// The service resolved: a parameter's type, or the type an `Optional` or a wrapper wraps.
    @usableFromInline let key: ServiceKey
    @usableFromInline let kind: Kind
    /// What resolves it synchronously whatever its owner's factory is, and so can never await an `async`
    /// factory: a property wrapper (`@Injected`) or a reference read later (`Lazy<Feed>`); nil for a factory's
    /// own resolve.
    @usableFromInline let synchronousUse: String?

    @usableFromInline
    enum Kind: Sendable, Hashable {
        /// Resolved while the instance is made; missing is an error.
        case required
        /// An `Optional`: nil when not registered.
        case optional
        /// `Lazy`, `Provider`, `WeakReference`: resolved later, so not part of a cycle of creations.
        case deferred
        /// `[T]`: every registration, none included.
        case collection
    }

    @usableFromInline
    init(key: ServiceKey, kind: Kind, synchronousUse: String? = nil) {
        self.key = key
        self.kind = kind
        self.synchronousUse = synchronousUse
    }

    /// The dependency of a parameter (or a declared dependency) of type `Value`: a property wrapper's type
    /// (`Injected<Feed>`) declares what the wrapper resolves.
    @usableFromInline
    static func of<Value>(_ type: Value.Type) -> Dependency {
        if let wrapper = Value.self as? any InjectionWrapper.Type { return wrapper.dependency(key: nil) }
        if let optional = Value.self as? any Autowirable.Type { return optional.dependency }
        if let wrapper = Value.self as? any ImplicitService.Type {
            let kind = wrapper.dependencyKind
            // A `Lazy`, `Provider` or `WeakReference` resolves when read, synchronously.
            let use = kind == .deferred ? String(describing: Value.self) : nil
            return Dependency(key: wrapper.wrappedService, kind: kind, synchronousUse: use)
        }
        return Dependency(key: ServiceKey(service: Value.self), kind: .required)
    }

    /// The dependency declared by `key`: a property wrapper's type with a key
    /// (`ServiceKey(service: Injected<Logger>.self, key: "audit")`) declares what the wrapper resolves under it.
    static func of(_ key: ServiceKey) -> Dependency {
        if !key.hasArguments, let wrapper = key.service as? any InjectionWrapper.Type {
            return wrapper.dependency(key: key.key)
        }
        return Dependency(key: key, kind: .required)
    }
}

/// A parameter type that autowiring resolves by a rule of its own.
@usableFromInline
protocol Autowirable {
    /// The parameter for `Value`, which is `Self` (passed so that the result needs no cast).
    static func autowiredParameter<Value>(_ type: Value.Type) -> AutowiredParameter<Value>
    /// What a parameter of this type depends on.
    static var dependency: Dependency { get }
}

extension Optional: Autowirable {
    @usableFromInline
    static var dependency: Dependency { Dependency(key: ServiceKey(service: Wrapped.self), kind: .optional) }

    @usableFromInline
    static func autowiredParameter<Value>(_ type: Value.Type) -> AutowiredParameter<Value> {
        let key = ServiceKey(service: Wrapped.self)
        return AutowiredParameter(
            dependency: dependency,
            resolve: { scope throws(ResolutionError) in
                let wrapped: Wrapped?
                do throws(ResolutionError) {
                    wrapped = try scope.resolveInstance(Wrapped.self, ())
                } catch  where error.code == .notRegistered && error.requested == key {
                    // Only the parameter's own type missing means nil; a failure deeper down is an error.
                    wrapped = nil
                }
                // `Value` is `Self`, that is `Wrapped?`.
                return renamed(wrapped, as: Value.self)
            },
            resolveAsync: { scope in
                let wrapped: Wrapped?
                do {
                    wrapped = try await scope.resolveInstanceAsync(Wrapped.self, ())
                } catch let error as ResolutionError where error.code == .notRegistered && error.requested == key {
                    wrapped = nil
                }
                return renamed(wrapped, as: Value.self)
            })
    }
}

/// The factory error of an implementation type that is not the registered service.
struct NotAnImplementation: Error, CustomStringConvertible {
    let implementation: Any.Type
    let service: Any.Type

    var description: String {
        "\(implementation) is not a \(service); register an implementation type that conforms to it"
    }
}
