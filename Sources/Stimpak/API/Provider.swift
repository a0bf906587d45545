/// Resolves `Service` on each call, from the scope the `Provider` was resolved in: a new instance of a
/// transient made on demand, the cached one of a reused service, or one made with runtime arguments.
///
/// ```swift
/// container.autowire(OrderImporter.self) { (makeOrder: Provider<Order>) in OrderImporter(makeOrder) }
/// let order = try makeOrder()               // a registration without arguments
/// let line = try makeLine(("SKU-1", 3))     // Provider<OrderLine>, registered with (String, Int)
/// ```
/// A provider is bound to its registration when it is made, as DryIoc compiles a registration to a delegate
/// once: `makeOrder()` calls the factory (or returns the cached instance) without looking the registration up,
/// and still detects cycles and depth as a resolve does. When the registrations change (a `register`, an
/// `unregister`, a `.replace`) or the scope is disposed, a call resolves as `require` does: the new
/// registration, or its error. For arguments, an ``ArgumentProvider`` is bound the same way.
public struct Provider<Service>: Sendable {
    /// The scope, the key and the registration without runtime arguments, bound when the provider was made.
    @usableFromInline let binding: ProviderBinding<Service, Void>

    init(scope: Scope, key: AnyHashable?) {
        binding = scope.providerBinding(Service.self, Void.self, key: key)
    }

    /// Whether a call now goes straight to the bound registration: false when the registrations changed or
    /// the scope was disposed since the provider was made (then calls resolve as `require` does), or when its
    /// registration is one that only a locked resolve serves.
    public var isBound: Bool { binding.isCurrent }

    /// Resolves the service registered without runtime arguments.
    ///
    /// Unlike `require`, it takes no `fileID` and `line`: two more arguments cost every call about 12 instructions.
    /// - Returns: A new instance, or the cached one of a reused service.
    /// - Throws: ``ResolutionError``.
    @inlinable @inline(__always)
    public func callAsFunction() throws(ResolutionError) -> Service {
        try binding(())
    }

    /// Resolves the service registered with runtime arguments of type `Args` (an ``ArgumentProvider`` is bound
    /// to that registration; this looks it up on each call).
    /// - Parameter arguments: One argument, or a tuple of several.
    /// - Returns: A new instance, or the cached one of a reused service.
    /// - Throws: ``ResolutionError``.
    @inlinable
    public func callAsFunction<Args>(_ arguments: Args) throws(ResolutionError) -> Service {
        try binding.resolveLookingUp(arguments)
    }
}

extension Provider: ImplicitService {
    static var wrappedService: ServiceKey { ServiceKey(service: Service.self) }
    static var dependencyKind: Dependency.Kind { .deferred }

    static func implicitInstance(from scope: Scope, key: AnyHashable?) throws(ResolutionError) -> Self {
        Self(scope: scope, key: key)
    }
}

/// Resolves a new `Service` registered with runtime arguments of type `Arguments` on each call, bound to that
/// registration when it is made (see ``Provider``): DryIoc's `Func<A, B, T>`.
///
/// ```swift
/// container.register(OrderLine.self) { (sku: String, quantity: Int) in OrderLine(sku, quantity) }
/// container.autowire(Basket.self) { (makeLine: ArgumentProvider<OrderLine, (String, Int)>) in Basket(makeLine) }
/// let line = try makeLine(("SKU-1", 3))
/// ```
/// When the registrations change or the scope is disposed, a call resolves as `require` does: the new
/// registration, or its error.
public struct ArgumentProvider<Service, Arguments>: Sendable {
    /// The scope, the key and the registration with `Arguments`, bound when the provider was made.
    @usableFromInline let binding: ProviderBinding<Service, Arguments>

    init(scope: Scope, key: AnyHashable?) {
        binding = scope.providerBinding(Service.self, Arguments.self, key: key)
    }

    /// Whether a call now goes straight to the bound registration: false when the registrations changed or
    /// the scope was disposed since the provider was made (then calls resolve as `require` does), or when its
    /// registration is one that only a locked resolve serves.
    public var isBound: Bool { binding.isCurrent }

    /// Resolves the service with `arguments`.
    /// - Parameter arguments: One argument, or a tuple of several.
    /// - Returns: A new instance, or the cached one of a reused service.
    /// - Throws: ``ResolutionError``.
    @inlinable @inline(__always)
    public func callAsFunction(_ arguments: Arguments) throws(ResolutionError) -> Service {
        try binding(arguments)
    }
}

extension ArgumentProvider: ImplicitService {
    static var wrappedService: ServiceKey { ServiceKey(service: Service.self, arguments: Arguments.self) }
    static var dependencyKind: Dependency.Kind { .deferred }

    static func implicitInstance(from scope: Scope, key: AnyHashable?) throws(ResolutionError) -> Self {
        Self(scope: scope, key: key)
    }
}

extension Resolving {
    /// A provider of `Service`, bound to its registration without runtime arguments (see ``Provider``): the
    /// same as resolving `Provider<Service>`.
    ///
    /// ```swift
    /// let makeOrder = container.provider(Order.self)
    /// let order = try makeOrder()
    /// ```
    /// - Parameters:
    ///   - type: The service type.
    ///   - key: The registration key, or nil.
    /// - Returns: The provider; its calls throw what `require` would.
    public func provider<Service>(_ type: Service.Type = Service.self, key: AnyHashable? = nil) -> Provider<Service> {
        Provider(scope: resolutionScope, key: key)
    }

    /// A provider of `Service`, bound to its registration with runtime arguments of type `Arguments` (see
    /// ``ArgumentProvider``): the same as resolving `ArgumentProvider<Service, Arguments>`.
    ///
    /// ```swift
    /// let makeLine = container.provider(OrderLine.self, arguments: (String, Int).self)
    /// let line = try makeLine(("SKU-1", 3))
    /// ```
    /// - Parameters:
    ///   - type: The service type.
    ///   - arguments: The type of the arguments: one argument's, or a tuple of several.
    ///   - key: The registration key, or nil.
    /// - Returns: The provider; its calls throw what `require` would.
    public func provider<Service, Arguments>(
        _ type: Service.Type = Service.self, arguments: Arguments.Type, key: AnyHashable? = nil
    ) -> ArgumentProvider<Service, Arguments> {
        ArgumentProvider(scope: resolutionScope, key: key)
    }
}
