extension Container {
    /// Wraps every instance of `Service` in another of the same type: a logging, caching or retrying wrapper
    /// around a protocol (DryIoc's decorators, Dose's `extend`).
    ///
    /// ```swift
    /// container.decorate((any Repository).self) { scope, inner in
    ///     LoggingRepository(inner, log: try scope.require(Logger.self))
    /// }
    /// ```
    /// A decorator applies to every registration of `Service` (every key, arguments and lifetime), those
    /// made before and after it, or only to the one under `key`. Decorators apply in the order they were
    /// added, the first wrapping the factory's instance; a reused instance is decorated once, and the cache
    /// holds the decorated instance. The decorator receives the scope the factory received.
    /// - Parameters:
    ///   - type: The service type.
    ///   - key: Only the registration under this key; nil for all of them.
    ///   - decorator: Receives the scope and the instance, and returns the instance to hand out; may throw.
    public func decorate<Service>(
        _ type: Service.Type, key: AnyHashable? = nil,
        _ decorator: @escaping @Sendable (Scope, Service) throws -> Service
    ) {
        let erased = AnyDecorator(service: ObjectIdentifier(Service.self), key: key) { scope, instance in
            guard let typed = instance as? Service else { throw DecoratorMismatch(service: Service.self) }
            return try decorator(scope, typed)
        }
        registry.change {
            registry.decorators.append(erased)
            for entry in registry.entries.values {
                if let registration = entry.registration, erased.applies(to: registration.serviceKey) {
                    registration.attach(erased)
                }
            }
        }
    }
}

/// A decorator of `Service`, as a registration applies it.
typealias Decorator<Service> = (Scope, Service) throws -> Service

/// A decorator with its service type erased, as the registry keeps it for registrations yet to come.
struct AnyDecorator: @unchecked Sendable {
    // Unchecked only for `key`, an `AnyHashable`: keys are documented to be immutable values.
    let service: ObjectIdentifier
    let key: AnyHashable?
    let decorate: @Sendable (Scope, Any) throws -> Any

    /// Whether it applies to the registration of `serviceKey`. Call with the lock held.
    func applies(to serviceKey: ServiceKey) -> Bool {
        ObjectIdentifier(serviceKey.service) == service && (key == nil || key == serviceKey.key)
    }
}

/// A decorator that received or returned an instance of another type than its service: not expected, since
/// each is applied to its own service's registrations.
struct DecoratorMismatch: Error, CustomStringConvertible {
    let service: Any.Type
    var description: String { "a decorator of \(service) got or returned another type" }
}
