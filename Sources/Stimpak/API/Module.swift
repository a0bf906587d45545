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

/// A unit that registers a group of services into a scope: a test's fakes, installed into the scope that
/// overrides the container's registrations for one test, or a feature's services for one session.
///
/// ```swift
/// struct FakeMail: ScopeModule {
///     func register(in scope: Scope) {
///         scope.register(Mailer.self, reuse: .singleton) { RecordingMailer() }
///     }
/// }
///
/// let test = container.openScope()
/// test.install(FakeMail())   // resolves from `test` and below; the container keeps its own
/// ```
/// A registration made on a scope takes precedence in that scope and below, caches with the scope in the
/// root's place, and is dropped with the scope.
public protocol ScopeModule {
    /// Registers the module's services.
    /// - Parameter scope: The scope to register into.
    func register(in scope: Scope)
}

extension Scope {
    /// Installs modules into this scope: each registers its services here, in the order given.
    /// - Parameter modules: The modules.
    public func install(_ modules: any ScopeModule...) {
        install(modules)
    }

    /// Installs modules into this scope: each registers its services here, in the order given.
    /// - Parameter modules: The modules.
    public func install(_ modules: [any ScopeModule]) {
        for module in modules { module.register(in: self) }
    }
}
