/// A unit that registers a group of services: a feature, a layer, a library's own services (Swinject's
/// `Assembly`, Kraken's dependency configurator, Dose's providers).
///
/// ```swift
/// struct NetworkingModule: Module {
///     func register(in container: Container) {
///         container.register(HTTPClient.self, reuse: .singleton) { HTTPClient() }
///         container.autowire(API.self, API.init)
///     }
/// }
///
/// container.install(NetworkingModule(), PersistenceModule())
/// ```
/// Registrations resolve their dependencies when they are resolved, not when they are registered, so
/// modules that depend on each other can be installed in any order. Two modules that register the same
/// service, arguments and key follow `ifAlreadyRegistered` (by default the first registration stays).
public protocol Module {
    /// Registers the module's services.
    /// - Parameter container: The container to register into.
    func register(in container: Container)
}

extension Container {
    /// Installs modules: each registers its services, in the order given.
    /// - Parameter modules: The modules.
    public func install(_ modules: any Module...) {
        install(modules)
    }

    /// Installs modules: each registers its services, in the order given.
    /// - Parameter modules: The modules.
    public func install(_ modules: [any Module]) {
        for module in modules { module.register(in: self) }
    }
}
